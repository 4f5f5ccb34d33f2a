// Constant folding over a partition group's SubgraphIr; the ops themselves are evaluated by
// graph/host_eval (ONNX semantics; anything unusual declines to fold).
#include "lowering/constant_folding.h"

#include <onnx/onnx_pb.h>

#include <cstring>
#include <functional>
#include <numeric>

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

Result<FoldingStats> FoldConstants(SubgraphIr* ir, int64_t max_bytes) {
  FoldingStats stats;
  std::vector<std::optional<HostTensor>> known(ir->values.size());
  std::vector<bool> is_output(ir->values.size(), false);
  for (int v : ir->outputs) is_output[v] = true;
  auto constant = [&](int v) -> const HostTensor* {
    if (v < 0) return nullptr;
    if (known[v]) return &*known[v];
    const IrValue& val = ir->values[v];
    if (val.kind != ValueKind::kWeight || !val.bytes || !val.info.shape.is_static()) return nullptr;
    if (val.bytes->size() > max_bytes) return nullptr;
    auto bytes = val.bytes->ReadAll();
    if (!bytes.ok()) return nullptr;
    HostTensor t{val.info.dtype, {}, **bytes};
    for (const auto& d : val.info.shape.dims) t.dims.push_back(d.value);
    known[v] = std::move(t);
    return &*known[v];
  };
  for (auto& op : ir->ops) {
    if (!op.subgraphs.empty()) continue;  // control flow: its subgraphs are nested programs
    bool blocked = false;
    for (int o : op.outputs) blocked = blocked || o < 0 || is_output[o];
    if (blocked) continue;
    // Cheap test first: weight bytes are read only when every input is a constant, so ops
    // on activations never pull large weights into memory.
    const bool shape_only = op.op_type == "Shape";
    bool all_constant = true;
    for (int v : op.inputs) {
      all_constant =
          all_constant && (v < 0 || known[v] || ir->values[v].kind == ValueKind::kWeight);
    }
    if (!all_constant && !shape_only) continue;
    std::vector<const HostTensor*> inputs;
    std::vector<graph::TensorInfo> infos;
    all_constant = true;
    for (int v : op.inputs) {
      inputs.push_back(shape_only ? nullptr : constant(v));
      infos.push_back(v >= 0 ? ir->values[v].info : graph::TensorInfo{});
      all_constant = all_constant && (v < 0 || inputs.back() || shape_only);
    }
    if (!all_constant) continue;
    auto result = EvaluateOp(op, inputs, infos, max_bytes);
    if (!result || result->size() != op.outputs.size()) continue;
    bool fits = true;
    for (const auto& r : *result) fits = fits && static_cast<int64_t>(r.bytes.size()) <= max_bytes;
    if (!fits) continue;
    for (size_t i = 0; i < result->size(); ++i) {
      IrValue& out = ir->values[op.outputs[i]];
      HostTensor& r = (*result)[i];
      out.kind = ValueKind::kWeight;
      out.info.dtype = r.dtype;
      out.info.shape = graph::Shape{true, {}};
      for (int64_t d : r.dims) out.info.shape.dims.push_back(graph::Dim{.value = d});
      out.bytes = bundle::ByteSource::Memory(std::make_shared<const std::string>(r.bytes));
      known[op.outputs[i]] = std::move(r);
    }
    op.removed = true;
    stats.folded_ops++;
  }
  ir->Compact();
  return stats;
}

}  // namespace ortc::lowering
