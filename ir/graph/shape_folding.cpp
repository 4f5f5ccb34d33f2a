// One round of graph-level shape folding: evaluate nodes on the host, rewrite the GraphProto.
#include "graph/shape_folding.h"

#include <cstring>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "base/element_types.h"
#include "graph/host_eval.h"

namespace ortc::graph {
namespace {

using T = onnx::TensorProto;

template <typename V, typename Field>
std::string Pack(const Field& field) {
  std::string out(field.size() * sizeof(V), '\0');
  for (int i = 0; i < field.size(); ++i) {
    const V v = static_cast<V>(field.Get(i));
    std::memcpy(out.data() + i * sizeof(V), &v, sizeof(V));
  }
  return out;
}

T ToTensorProto(const std::string& name, const HostTensor& h) {
  T t;
  t.set_name(name);
  t.set_data_type(h.dtype);
  for (int64_t d : h.dims) t.add_dims(d);
  t.set_raw_data(h.bytes);
  return t;
}

}  // namespace

std::optional<HostTensor> ReadSmall(const Initializer& init, int64_t max_bytes) {
  if (init.external || !init.proto || init.byte_size > max_bytes) return std::nullopt;
  const T& t = *init.proto;
  HostTensor h{init.dtype, init.dims, {}};
  if (t.has_raw_data()) {
    h.bytes = t.raw_data();
  } else {
    switch (init.dtype) {
      case T::FLOAT:
        h.bytes = Pack<float>(t.float_data());
        break;
      case T::DOUBLE:
        h.bytes = Pack<double>(t.double_data());
        break;
      case T::INT64:
        h.bytes = Pack<int64_t>(t.int64_data());
        break;
      case T::INT32:
        h.bytes = Pack<int32_t>(t.int32_data());
        break;
      case T::INT8:
        h.bytes = Pack<int8_t>(t.int32_data());
        break;
      case T::UINT8:
        h.bytes = Pack<uint8_t>(t.int32_data());
        break;
      case T::BOOL:
        h.bytes = Pack<bool>(t.int32_data());
        break;
      default:
        return std::nullopt;
    }
  }
  const int64_t bits = ElementBits(init.dtype);
  if (bits <= 0 || bits % 8 != 0) return std::nullopt;
  if (static_cast<int64_t>(h.bytes.size()) != h.elements() * (bits / 8)) return std::nullopt;
  return h;
}

int FoldShapeComputationsOnce(Model* model, int64_t max_bytes) {
  const Graph& g = model->graph;
  onnx::GraphProto* proto = model->proto.mutable_graph();
  std::unordered_set<std::string> listed_inputs;
  for (const auto& in : proto->input()) listed_inputs.insert(in.name());

  // Identity of an initializer is folded by renaming its readers to the initializer (an alias),
  // not by copying: exporters write shared weights that way, and a copy would double them.
  std::unordered_map<int, int> alias;  // folded Identity output -> initializer value
  auto root = [&](int v) {
    auto it = alias.find(v);
    return it == alias.end() ? v : it->second;
  };
  auto is_initializer = [&](int v) {
    return g.values[v].initializer >= 0 && !listed_inputs.count(g.values[v].name);
  };

  // Values known on the host: read lazily from initializers, or produced by folded nodes.
  std::unordered_map<int, HostTensor> known;
  auto constant = [&](int v) -> const HostTensor* {
    v = root(v);
    if (auto it = known.find(v); it != known.end()) return &it->second;
    const Value& val = g.values[v];
    if (val.initializer < 0 || listed_inputs.count(val.name)) return nullptr;
    auto h = ReadSmall(g.initializers[val.initializer], max_bytes);
    if (!h) return nullptr;
    return &known.emplace(v, std::move(*h)).first->second;
  };

  std::vector<bool> folded(g.nodes.size(), false);
  int count = 0;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    if (!node.domain.empty() || node.has_subgraphs || !node.implicit_inputs.empty() ||
        !HostEvaluable(node.op_type) || node.outputs.empty()) {
      continue;
    }
    bool eligible = true;
    for (int o : node.outputs) eligible = eligible && o >= 0 && !g.values[o].is_graph_output;
    if (!eligible) continue;
    if (node.op_type == "Identity" && node.inputs.size() == 1 && node.outputs.size() == 1 &&
        node.inputs[0] >= 0 && is_initializer(root(node.inputs[0]))) {
      const int out = node.outputs[0];
      bool implicit_reader = false;  // a subgraph reads it by name: renaming would miss it
      for (int c : g.values[out].consumers) {
        for (int v : g.nodes[c].implicit_inputs) implicit_reader = implicit_reader || v == out;
      }
      if (implicit_reader) continue;
      alias[out] = root(node.inputs[0]);
      folded[n] = true;
      model->folded_nodes.push_back({node.name, node.op_type});
      ++count;
      continue;
    }
    // Shape and Size read only the static shape; everything else needs constant inputs.
    const bool shape_only = node.op_type == "Shape" || node.op_type == "Size";
    std::vector<const HostTensor*> inputs;
    std::vector<TensorInfo> infos;
    for (int v : node.inputs) {
      infos.push_back(v >= 0 ? g.values[v].info : TensorInfo{});
      inputs.push_back(v >= 0 && !shape_only ? constant(v) : nullptr);
      if (!shape_only && !inputs.back()) eligible = false;
      if (!eligible) break;
    }
    if (!eligible) continue;
    HostOp op{node.op_type, node.domain, node.since_version, {}};
    op.num_outputs = node.outputs.size();
    for (const auto& a : node.proto->attribute()) op.attributes.push_back(&a);
    op.max_output_bytes = max_bytes;
    auto result = EvaluateHostOp(op, inputs, infos);
    if (!result || result->size() != node.outputs.size()) continue;
    bool fits = true;
    for (const auto& r : *result) fits = fits && static_cast<int64_t>(r.bytes.size()) <= max_bytes;
    if (!fits) continue;
    for (size_t i = 0; i < result->size(); ++i) {
      known.insert_or_assign(node.outputs[i], std::move((*result)[i]));
    }
    folded[n] = true;
    model->folded_nodes.push_back({node.name, node.op_type});
    ++count;
  }
  if (count == 0) return 0;

  // What the remaining nodes (and the graph's outputs) still read.
  std::unordered_set<int> used;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    if (folded[n]) continue;
    for (int v : g.nodes[n].inputs) used.insert(v);
    for (int v : g.nodes[n].implicit_inputs) used.insert(v);
  }
  for (int v : g.outputs) used.insert(v);
  for (const auto& [out, source] : alias) {
    if (used.count(out)) used.insert(source);
  }
  // Initializers read by folded nodes and by nothing else are dropped; others stay as they are.
  std::unordered_set<std::string> dropped_inits;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    if (!folded[n]) continue;
    for (int v : g.nodes[n].inputs) {
      if (v >= 0 && g.values[v].initializer >= 0 && !used.count(v) &&
          !listed_inputs.count(g.values[v].name)) {
        dropped_inits.insert(g.values[v].name);
      }
    }
  }

  // Rewrite the proto; new initializers are appended in graph node order (deterministic).
  std::unordered_set<const onnx::NodeProto*> removed;
  std::vector<T> added;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    if (!folded[n]) continue;
    removed.insert(g.nodes[n].proto);
    for (int o : g.nodes[n].outputs) {
      if (used.count(o) && !alias.count(o))
        added.push_back(ToTensorProto(g.values[o].name, known.at(o)));
    }
  }
  std::unordered_map<std::string, std::string> renamed;
  for (const auto& [out, source] : alias) renamed[g.values[out].name] = g.values[source].name;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept_nodes;
  for (auto& node : *proto->mutable_node()) {
    if (removed.count(&node)) continue;
    for (auto& in : *node.mutable_input()) {
      if (auto it = renamed.find(in); it != renamed.end()) in = it->second;
    }
    *kept_nodes.Add() = std::move(node);
  }
  proto->mutable_node()->Swap(&kept_nodes);
  google::protobuf::RepeatedPtrField<T> kept_inits;
  for (auto& t : *proto->mutable_initializer()) {
    if (!dropped_inits.count(t.name())) *kept_inits.Add() = std::move(t);
  }
  for (auto& t : added) *kept_inits.Add() = std::move(t);
  proto->mutable_initializer()->Swap(&kept_inits);
  // value_info of values that are now initializers (or gone) would only restate or conflict.
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept_info;
  std::unordered_set<std::string> gone;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    if (!folded[n]) continue;
    for (int o : g.nodes[n].outputs) gone.insert(g.values[o].name);
  }
  for (auto& vi : *proto->mutable_value_info()) {
    if (!gone.count(vi.name())) *kept_info.Add() = std::move(vi);
  }
  proto->mutable_value_info()->Swap(&kept_info);
  return count;
}

}  // namespace ortc::graph
