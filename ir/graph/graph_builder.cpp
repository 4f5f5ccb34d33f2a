// Graph construction: value table, reference checks, implicit subgraph inputs, topological sort.
#include "graph/graph_builder.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <set>
#include <unordered_set>

#include "graph/opset_support.h"

namespace ortc::graph {
namespace {

// Names a subgraph (and its nested subgraphs) reads from enclosing scopes.
void CollectOuterReferences(const onnx::GraphProto& g, std::set<std::string>* out) {
  std::unordered_set<std::string> defined;
  for (const auto& v : g.input()) defined.insert(v.name());
  for (const auto& t : g.initializer()) defined.insert(t.name());
  for (const auto& n : g.node()) {
    for (const auto& o : n.output()) defined.insert(o);
  }
  auto note = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name)) out->insert(name);
  };
  for (const auto& n : g.node()) {
    for (const auto& i : n.input()) note(i);
    for (const auto& a : n.attribute()) {
      std::set<std::string> nested;
      if (a.has_g()) CollectOuterReferences(a.g(), &nested);
      for (const auto& sg : a.graphs()) CollectOuterReferences(sg, &nested);
      for (const auto& name : nested) note(name);
    }
  }
  for (const auto& o : g.output()) note(o.name());
}

}  // namespace

void SetInfoFromType(const onnx::TypeProto& type, TensorInfo* info) {
  if (!type.has_tensor_type()) return;
  info->dtype = type.tensor_type().elem_type();
  if (!type.tensor_type().has_shape()) return;
  info->shape.rank_known = true;
  info->shape.dims.clear();
  for (const auto& d : type.tensor_type().shape().dim()) {
    Dim dim;
    if (d.has_dim_value()) dim.value = d.dim_value();
    if (d.has_dim_param()) dim.symbol = d.dim_param();
    info->shape.dims.push_back(dim);
  }
}

Status BuildGraph(onnx::GraphProto* proto, const std::map<std::string, int64_t>& opsets, Graph* g) {
  auto add_value = [&](const std::string& name) {
    g->value_index.emplace(name, static_cast<int>(g->values.size()));
    g->values.push_back(Value{.name = name});
    return static_cast<int>(g->values.size()) - 1;
  };

  // Initializers first (already sized by the caller), then graph inputs.
  for (int i = 0; i < static_cast<int>(g->initializers.size()); ++i) {
    const auto& init = g->initializers[i];
    if (init.name.empty()) return InvalidGraph("an initializer has no name");
    if (g->FindValue(init.name) >= 0) {
      return InvalidGraph("initializer '" + init.name + "' is defined twice");
    }
    int v = add_value(init.name);
    g->values[v].initializer = i;
    g->values[v].info.dtype = init.dtype;
    g->values[v].info.shape.rank_known = true;
    for (int64_t d : init.dims) g->values[v].info.shape.dims.push_back(Dim{.value = d});
  }
  for (const auto& in : proto->input()) {
    if (in.name().empty()) return InvalidGraph("a graph input has no name");
    int v = g->FindValue(in.name());
    if (v >= 0 && g->values[v].initializer >= 0) continue;  // IR < 4 style: initializer listed
    if (v >= 0) return InvalidGraph("graph input '" + in.name() + "' is declared twice");
    v = add_value(in.name());
    g->values[v].is_graph_input = true;
    SetInfoFromType(in.type(), &g->values[v].info);
    g->inputs.push_back(v);
  }

  // Node outputs: each name produced exactly once (static single assignment).
  const int n = proto->node_size();
  std::vector<std::string> names(n);
  std::unordered_map<std::string, int> name_uses;
  for (int i = 0; i < n; ++i) {
    const auto& node = proto->node(i);
    std::string name = node.name().empty() ? node.op_type() + "_" + std::to_string(i) : node.name();
    if (name_uses[name]++ > 0) name += "#" + std::to_string(name_uses[name] - 1);
    names[i] = name;
    for (const auto& out : node.output()) {
      if (out.empty()) continue;
      int existing = g->FindValue(out);
      if (existing >= 0) {
        const auto& ev = g->values[existing];
        std::string what = ev.initializer >= 0 ? "an initializer"
                           : ev.is_graph_input ? "a graph input"
                                               : "another node";
        return InvalidGraph("node '" + name + "' (" + node.op_type() + ") writes '" + out +
                            "', which " + what + " already defines");
      }
      add_value(out);
    }
  }

  // Inputs, explicit and implicit, must all be defined somewhere in this graph.
  std::vector<Node> unsorted(n);
  for (int i = 0; i < n; ++i) {
    const auto& np = proto->node(i);
    Node& node = unsorted[i];
    node.name = names[i];
    node.op_type = np.op_type();
    node.domain = IsDefaultDomain(np.domain()) ? "" : np.domain();
    auto op = opsets.find(node.domain);
    node.opset = op == opsets.end() ? 0 : op->second;
    if (node.op_type.empty()) return InvalidGraph("node '" + node.name + "' has no op_type");
    for (const auto& in : np.input()) {
      if (in.empty()) {
        node.inputs.push_back(-1);
        continue;
      }
      int v = g->FindValue(in);
      if (v < 0) {
        return InvalidGraph("node '" + node.name + "' (" + node.op_type + ") reads '" + in +
                            "', which no node, graph input or initializer provides");
      }
      node.inputs.push_back(v);
    }
    std::set<std::string> outer;
    for (const auto& a : np.attribute()) {
      if (a.has_g()) CollectOuterReferences(a.g(), &outer);
      for (const auto& sg : a.graphs()) CollectOuterReferences(sg, &outer);
      if (a.has_g() || a.graphs_size() > 0) node.has_subgraphs = true;
    }
    for (const auto& name : outer) {
      int v = g->FindValue(name);
      if (v < 0) {
        return InvalidGraph("a subgraph of node '" + node.name + "' (" + node.op_type +
                            ") reads '" + name + "', which is not defined in any enclosing scope");
      }
      node.implicit_inputs.push_back(v);
    }
    for (const auto& out : np.output())
      node.outputs.push_back(out.empty() ? -1 : g->FindValue(out));
  }

  // Kahn's algorithm; among ready nodes the one earliest in the file goes first (stable).
  std::vector<int> indegree(n, 0);
  std::vector<std::vector<int>> users(n);
  std::vector<int> producer_of_value(g->values.size(), -1);
  for (int i = 0; i < n; ++i) {
    for (int v : unsorted[i].outputs) {
      if (v >= 0) producer_of_value[v] = i;
    }
  }
  for (int i = 0; i < n; ++i) {
    std::set<int> preds;
    for (int v : unsorted[i].inputs) {
      if (v >= 0 && producer_of_value[v] >= 0) preds.insert(producer_of_value[v]);
    }
    for (int v : unsorted[i].implicit_inputs) {
      if (producer_of_value[v] >= 0) preds.insert(producer_of_value[v]);
    }
    indegree[i] = static_cast<int>(preds.size());
    for (int p : preds) users[p].push_back(i);
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i) {
    if (indegree[i] == 0) ready.push(i);
  }
  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int u : users[i]) {
      if (--indegree[u] == 0) ready.push(u);
    }
  }
  if (static_cast<int>(order.size()) != n) {
    std::string stuck;
    int shown = 0;
    for (int i = 0; i < n; ++i) {
      if (indegree[i] > 0 && shown < 5) {
        stuck += (shown++ ? ", '" : "'") + unsorted[i].name + "'";
      }
    }
    return InvalidGraph("the graph has a cycle: " + std::to_string(n - order.size()) +
                        " nodes depend on each other, among them " + stuck);
  }

  // Re-order the proto and the node table together, then link values to nodes.
  google::protobuf::RepeatedPtrField<onnx::NodeProto> sorted;
  for (int i : order) *sorted.Add() = std::move(*proto->mutable_node(i));
  proto->mutable_node()->Swap(&sorted);
  g->nodes.clear();
  for (int pos = 0; pos < n; ++pos) {
    g->nodes.push_back(std::move(unsorted[order[pos]]));
    g->nodes.back().proto = &proto->node(pos);
  }
  for (int pos = 0; pos < n; ++pos) {
    const Node& node = g->nodes[pos];
    for (int v : node.outputs) {
      if (v >= 0) g->values[v].producer = pos;
    }
    auto consume = [&](int v) {
      if (v >= 0 && (g->values[v].consumers.empty() || g->values[v].consumers.back() != pos)) {
        g->values[v].consumers.push_back(pos);
      }
    };
    for (int v : node.inputs) consume(v);
    for (int v : node.implicit_inputs) consume(v);
  }

  for (const auto& out : proto->output()) {
    int v = g->FindValue(out.name());
    if (v < 0) {
      return InvalidGraph("graph output '" + out.name() +
                          "' is not produced by any node, input or initializer");
    }
    g->values[v].is_graph_output = true;
    if (g->values[v].info.dtype == 0) SetInfoFromType(out.type(), &g->values[v].info);
    g->outputs.push_back(v);
  }
  for (const auto& vi : proto->value_info()) {
    int v = g->FindValue(vi.name());
    if (v >= 0 && g->values[v].info.dtype == 0) SetInfoFromType(vi.type(), &g->values[v].info);
  }
  return Status::Ok();
}

}  // namespace ortc::graph
