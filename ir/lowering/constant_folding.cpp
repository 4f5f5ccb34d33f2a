// Constant folding over a partition group's SubgraphIr; the ops themselves are evaluated by
// graph/host_eval (ONNX semantics; anything unusual declines to fold).
#include "lowering/constant_folding.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
#include <numeric>
#include <set>

namespace ortc::lowering {

std::optional<std::vector<HostTensor>> EvaluateOp(const IrOp& op,
                                                  const std::vector<const HostTensor*>& inputs,
                                                  const std::vector<graph::TensorInfo>& infos,
                                                  int64_t max_bytes) {
  graph::HostOp host{op.op_type, op.domain, op.since_version, {}};
  host.max_output_bytes = max_bytes;
  host.num_outputs = op.outputs.size();
  for (const auto& a : op.attributes) host.attributes.push_back(&a);
  return graph::EvaluateHostOp(host, inputs, infos);
}

bool MovesValuesOnly(std::string_view op_type) {
  static const std::set<std::string_view, std::less<>> ops = {
      "Identity",       "Reshape",  "Flatten", "Squeeze",      "Unsqueeze",   "Transpose",
      "Slice",          "Gather",   "Concat",  "Expand",       "Tile",        "Pad",
      "GatherElements", "GatherND", "Split",   "DepthToSpace", "SpaceToDepth"};
  return ops.count(op_type) > 0;
}

int64_t FoldLimit(int64_t source_bytes, bool moves_model_weight, int64_t max_bytes) {
  if (moves_model_weight) return max_bytes;
  const int64_t cap = std::numeric_limits<int64_t>::max() / kMaxFoldGrowth;
  return std::max(max_bytes, std::min(source_bytes, cap) * kMaxFoldGrowth);
}

Result<FoldingStats> FoldConstants(SubgraphIr* ir, int64_t max_bytes) {
  FoldingStats stats;
  std::vector<std::optional<HostTensor>> known(ir->values.size());
  std::vector<bool> is_output(ir->values.size(), false);
  for (int v : ir->outputs) is_output[v] = true;
  // Per value, the weights it is computed from (sorted, each once, so that reading a weight
  // twice cannot double the allowance), for FoldLimit.
  std::vector<std::vector<int>> sources(ir->values.size());
  for (size_t v = 0; v < ir->values.size(); ++v)
    if (ir->values[v].kind == ValueKind::kWeight) sources[v] = {static_cast<int>(v)};
  auto source_bytes = [&](const std::vector<int>& weights) {
    int64_t bytes = 0;
    for (int w : weights) {
      const IrValue& val = ir->values[w];
      if (val.bytes)
        bytes = std::min(bytes + static_cast<int64_t>(val.bytes->size()),
                         std::numeric_limits<int64_t>::max() / 2);
    }
    return bytes;
  };
  std::vector<bool> computed(ir->values.size(), false);  // folded here, not the model's own
  // Readers not yet visited, per value: a known value is dropped once none is left.
  std::vector<int> pending_readers(ir->values.size(), 0);
  for (const auto& op : ir->ops)
    for (int v : op.inputs)
      if (v >= 0) ++pending_readers[v];
  // A constant input of an op whose result may be `limit` bytes: a weight larger than that is
  // not read (only Slice and Gather make less of more, and the runtime does them as well).
  auto constant = [&](int v, int64_t limit) -> const HostTensor* {
    if (v < 0) return nullptr;
    if (known[v]) return &*known[v];
    const IrValue& val = ir->values[v];
    if (val.kind != ValueKind::kWeight || !val.bytes || !val.info.shape.is_static()) return nullptr;
    if (static_cast<int64_t>(val.bytes->size()) > limit) return nullptr;
    auto bytes = val.bytes->ReadAll();
    if (!bytes.ok()) return nullptr;
    HostTensor t{val.info.dtype, {}, **bytes};
    for (const auto& d : val.info.shape.dims) t.dims.push_back(d.value);
    known[v] = std::move(t);
    return &*known[v];
  };
  // Folds one op when it can; false leaves it in the program.
  auto fold = [&](IrOp& op) -> bool {
    if (!op.subgraphs.empty()) return false;  // control flow: its subgraphs are nested programs
    bool blocked = false;
    for (int o : op.outputs) blocked = blocked || o < 0 || is_output[o];
    if (blocked) return false;
    // Cheap test first: weight bytes are read only when every input is a constant, so ops
    // on activations never pull large weights into memory.
    const bool shape_only = op.op_type == "Shape";
    bool all_constant = true;
    for (int v : op.inputs) {
      all_constant =
          all_constant && (v < 0 || known[v] || ir->values[v].kind == ValueKind::kWeight);
    }
    if (!all_constant && !shape_only) return false;
    std::vector<int> from;
    for (int v : op.inputs) {
      if (v < 0) continue;
      std::vector<int> merged;
      std::set_union(from.begin(), from.end(), sources[v].begin(), sources[v].end(),
                     std::back_inserter(merged));
      from = std::move(merged);
    }
    bool moves_model_weight = MovesValuesOnly(op.op_type);
    for (size_t i = 0; i < op.inputs.size() && moves_model_weight; ++i) {
      if (i > 0 && op.op_type != "Concat") break;  // shapes, indices, pads
      moves_model_weight = op.inputs[i] < 0 || !computed[op.inputs[i]];
    }
    const int64_t limit = FoldLimit(source_bytes(from), moves_model_weight, max_bytes);
    std::vector<const HostTensor*> inputs;
    std::vector<graph::TensorInfo> infos;
    all_constant = true;
    for (int v : op.inputs) {
      inputs.push_back(shape_only ? nullptr : constant(v, limit));
      infos.push_back(v >= 0 ? ir->values[v].info : graph::TensorInfo{});
      all_constant = all_constant && (v < 0 || inputs.back() || shape_only);
    }
    if (!all_constant) return false;
    auto result = EvaluateOp(op, inputs, infos, limit);
    if (!result || result->size() != op.outputs.size()) return false;
    bool fits = true;
    for (const auto& r : *result) fits = fits && static_cast<int64_t>(r.bytes.size()) <= limit;
    if (!fits) return false;
    for (size_t i = 0; i < result->size(); ++i) {
      IrValue& out = ir->values[op.outputs[i]];
      HostTensor& r = (*result)[i];
      out.kind = ValueKind::kWeight;
      out.info.dtype = r.dtype;
      out.info.shape = graph::Shape{true, {}};
      for (int64_t d : r.dims) out.info.shape.dims.push_back(graph::Dim{.value = d});
      out.bytes = bundle::ByteSource::Memory(std::make_shared<const std::string>(r.bytes));
      sources[op.outputs[i]] = from;
      computed[op.outputs[i]] = true;
      if (pending_readers[op.outputs[i]] > 0) known[op.outputs[i]] = std::move(r);
    }
    return true;
  };
  for (auto& op : ir->ops) {
    if (fold(op)) {
      op.removed = true;
      stats.folded_ops++;
    }
    for (int v : op.inputs)  // read for the last time: no longer held
      if (v >= 0 && --pending_readers[v] == 0) known[v].reset();
  }
  ir->Compact();
  return stats;
}

}  // namespace ortc::lowering
