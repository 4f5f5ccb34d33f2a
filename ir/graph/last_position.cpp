// The last position of an output, sliced as early as the ops computing it allow.
#include "graph/last_position.h"

#include <limits>
#include <set>
#include <string_view>

namespace ortc::graph {
namespace {

bool IsUnaryElementwise(std::string_view op) {
  static const std::set<std::string_view, std::less<>> ops = {
      "Cast", "Identity", "Relu", "Tanh", "Sigmoid",  "Neg",  "Abs",   "Exp",
      "Log",  "Sqrt",     "Erf",  "Gelu", "Softsign", "Clip", "Floor", "Ceil"};
  return ops.count(op) > 0;
}

int Rank(const Graph& g, int v) {
  const auto& s = g.values[v].info.shape;
  return s.rank_known ? static_cast<int>(s.dims.size()) : -1;
}

// Whether v broadcasts along the row axis of a result it is aligned with from the right: fewer
// than two axes, or a row axis of 1.
bool SameForEveryRow(const Graph& g, int v) {
  const int r = Rank(g, v);
  if (r < 0) return false;
  return r < 2 || g.values[v].info.shape.dims[r - 2].value == 1;
}

// The input of `n` its output's rows are computed from, one row from the same row, or -1 when
// n computes rows from other rows (or it cannot be told from the shapes).
int RowInput(const Graph& g, const Node& n) {
  if (!n.domain.empty() || n.outputs.size() != 1 || n.outputs[0] < 0) return -1;
  const int rank = Rank(g, n.outputs[0]);
  if (rank < 2 || n.inputs.empty() || n.inputs[0] < 0) return -1;
  const std::string& op = n.op_type;
  if (op == "MatMul" && n.inputs.size() == 2 && n.inputs[1] >= 0 && Rank(g, n.inputs[1]) == 2 &&
      Rank(g, n.inputs[0]) == rank)
    return n.inputs[0];
  if (IsUnaryElementwise(op) && Rank(g, n.inputs[0]) == rank) return n.inputs[0];
  if ((op == "Softmax" || op == "LogSoftmax") && n.opset >= 13) {
    int64_t axis = -1;
    for (const auto& a : n.proto->attribute())
      if (a.name() == "axis") axis = a.i();
    return axis == -1 || axis == rank - 1 ? n.inputs[0] : -1;
  }
  if ((op == "Add" || op == "Sub" || op == "Mul" || op == "Div") && n.inputs.size() == 2 &&
      n.inputs[1] >= 0) {
    for (int i : {0, 1}) {
      const int row = n.inputs[i], other = n.inputs[1 - i];
      if (Rank(g, row) == rank && SameForEveryRow(g, other)) return row;
    }
  }
  return -1;
}

}  // namespace

Status KeepLastPosition(Model* model, const std::string& name) {
  const Graph& g = model->graph;
  const int out = g.FindValue(name);
  if (out < 0 || !g.values[out].is_graph_output) {
    std::string names;
    for (int v : g.outputs) names += (names.empty() ? "" : ", ") + g.values[v].name;
    return InvalidArgument("--last-token-logits: the model has no output named '" + name +
                           "' (its outputs: " + names + ")");
  }
  const int rank = Rank(g, out);
  if (rank < 2)
    return InvalidArgument("--last-token-logits: output '" + name + "' has shape " +
                           g.values[out].info.shape.ToString() +
                           "; it needs positions and values as its last two axes");
  if (!g.values[out].consumers.empty())
    return InvalidArgument("--last-token-logits: output '" + name + "' is also read by node '" +
                           g.nodes[g.values[out].consumers[0]].name +
                           "', which needs every position");
  if (model->opsets.count("") && model->opsets.at("") < 10)
    return NotImplemented("--last-token-logits needs ai.onnx opset 10 or newer (Slice's inputs)");
  // Walk up while the value is computed row by row, to the highest value whose rows only this
  // chain reads, or the edge from a value others read in full.
  int top = out;
  const Node* reader = nullptr;   // the node reading `top` (none: top is the output itself)
  std::set<std::string> resized;  // the values whose rows the slice removes
  for (int steps = 0; steps < 64; ++steps) {
    const int producer = g.values[top].producer;
    if (producer < 0) break;
    const int row = RowInput(g, g.nodes[producer]);
    if (row < 0 || Rank(g, row) != rank) break;
    reader = &g.nodes[producer];
    resized.insert(g.values[top].name);
    top = row;
    // Read by others too (or an output): they keep every row; the slice goes on this edge.
    if (g.values[row].is_graph_output || g.values[row].consumers.size() != 1) break;
  }
  if (g.values[out].producer < 0)
    return InvalidArgument("--last-token-logits: output '" + name +
                           "' is a graph input or a constant, not computed by the graph");
  auto* gp = model->proto.mutable_graph();
  // With a reader, the Slice's output; without, the producer's output renamed (every row).
  const std::string sliced = name + (reader ? "/last_position" : "/all_positions"),
                    prefix = name + "/last_position_";
  auto int64s = [&](const std::string& tensor, int64_t value) {
    auto* t = gp->add_initializer();
    t->set_name(prefix + tensor);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(1);
    t->add_int64_data(value);
    return t->name();
  };
  onnx::NodeProto slice;
  slice.set_name(name + "/LastPosition");
  slice.set_op_type("Slice");
  slice.add_input(reader ? g.values[top].name : sliced);
  slice.add_input(int64s("starts", -1));
  slice.add_input(int64s("ends", std::numeric_limits<int64_t>::max()));
  slice.add_input(int64s("axes", rank - 2));
  if (reader) {
    slice.add_output(sliced);
    for (auto& n : *gp->mutable_node())
      if (&n == reader->proto)
        for (auto& input : *n.mutable_input())
          if (input == g.values[top].name) input = sliced;
  } else {
    // Nothing to move past: the output's producer writes every row, the Slice the output.
    slice.add_output(name);
    for (auto& n : *gp->mutable_node())
      for (auto& output : *n.mutable_output())
        if (output == name) output = sliced;
  }
  // Before its reader, keeping the file's topological order (the checker wants it).
  *gp->add_node() = std::move(slice);
  int at = gp->node_size() - 1;
  if (reader)
    while (at > 0 && &gp->node(at - 1) != reader->proto) {
      gp->mutable_node()->SwapElements(at - 1, at);
      --at;
    }
  if (reader && at > 0) gp->mutable_node()->SwapElements(at - 1, at);
  // Shapes recorded for the resized values (exporters write them) would contradict inference.
  auto* infos = gp->mutable_value_info();
  for (int i = infos->size() - 1; i >= 0; --i)
    if (resized.count(infos->Get(i).name()) || infos->Get(i).name() == name)
      infos->DeleteSubrange(i, 1);
  // The declared output shape: its row axis is now 1.
  for (auto& o : *gp->mutable_output()) {
    if (o.name() != name || !o.type().tensor_type().has_shape()) continue;
    auto* shape = o.mutable_type()->mutable_tensor_type()->mutable_shape();
    if (shape->dim_size() == rank) shape->mutable_dim(rank - 2)->set_dim_value(1);
  }
  return Status::Ok();
}

}  // namespace ortc::graph
