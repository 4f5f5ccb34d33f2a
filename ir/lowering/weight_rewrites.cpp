// Rewrites of constant weights: see weight_rewrites.h.
#include "lowering/weight_rewrites.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>

namespace ortc::lowering {
namespace {

bool IsConstFloat(const SubgraphIr& ir, int v) {
  return v >= 0 && ir.values[v].kind == ValueKind::kWeight && ir.values[v].bytes &&
         ir.values[v].info.dtype == onnx::TensorProto::FLOAT && ir.values[v].info.shape.is_static();
}

Result<std::vector<float>> Floats(const IrValue& v) {
  auto bytes = v.bytes->ReadAll();
  if (!bytes.ok()) return bytes.status();
  std::vector<float> out((*bytes)->size() / sizeof(float));
  std::memcpy(out.data(), (*bytes)->data(), out.size() * sizeof(float));
  return out;
}

std::shared_ptr<const std::string> ToBytes(const std::vector<float>& f) {
  return std::make_shared<const std::string>(reinterpret_cast<const char*>(f.data()),
                                             f.size() * sizeof(float));
}

// The op (not removed) that reads v, when exactly one op reads it and it is not an output.
IrOp* SoleReader(SubgraphIr* ir, int v) {
  IrOp* reader = nullptr;
  for (auto& op : ir->ops) {
    if (op.removed) continue;
    for (int i : op.inputs) {
      if (i != v) continue;
      if (reader && reader != &op) return nullptr;
      reader = &op;
    }
  }
  for (int o : ir->outputs) {
    if (o == v) return nullptr;
  }
  return reader;
}

}  // namespace

Result<int> FoldBatchNormIntoConv(SubgraphIr* ir) {
  int folded = 0;
  for (auto& conv : ir->ops) {
    if (conv.removed || conv.op_type != "Conv" || !conv.domain.empty() || conv.outputs.size() != 1)
      continue;
    if (conv.inputs.size() < 2 || !IsConstFloat(*ir, conv.inputs[1])) continue;
    const bool has_bias = conv.inputs.size() > 2 && conv.inputs[2] >= 0;
    if (has_bias && !IsConstFloat(*ir, conv.inputs[2])) continue;
    IrOp* bn = SoleReader(ir, conv.outputs[0]);
    if (!bn || bn->op_type != "BatchNormalization" || !bn->domain.empty() ||
        bn->inputs.size() != 5 || bn->inputs[0] != conv.outputs[0] ||
        bn->IntAttr("training_mode", 0) != 0) {
      continue;
    }
    bool params_const = true;
    for (int i = 1; i < 5; ++i) params_const = params_const && IsConstFloat(*ir, bn->inputs[i]);
    // Only the normalised output may be used: the BatchNormalization is removed, and the
    // running statistics of opsets 7-14 (outputs 1-4) would lose their producer.
    bool extra_outputs = false;
    for (size_t o = 1; o < bn->outputs.size(); ++o) extra_outputs |= bn->outputs[o] >= 0;
    if (!params_const || extra_outputs) continue;
    // Weights of rank 0 or 1 (an input without a shape skips ONNX's rank check) have no channels.
    if (ir->values[conv.inputs[1]].info.shape.dims.size() < 3) continue;

    auto w = Floats(ir->values[conv.inputs[1]]);
    auto scale = Floats(ir->values[bn->inputs[1]]);
    auto shift = Floats(ir->values[bn->inputs[2]]);
    auto mean = Floats(ir->values[bn->inputs[3]]);
    auto var = Floats(ir->values[bn->inputs[4]]);
    for (const auto* r : {&w, &scale, &shift, &mean, &var}) {
      if (!r->ok()) return r->status();
    }
    const size_t out_channels =
        static_cast<size_t>(ir->values[conv.inputs[1]].info.shape.dims[0].value);
    if (scale->size() != out_channels || shift->size() != out_channels ||
        mean->size() != out_channels || var->size() != out_channels || out_channels == 0 ||
        w->size() % out_channels != 0) {
      continue;
    }
    std::vector<float> bias(out_channels, 0.f);
    if (has_bias) {
      auto b = Floats(ir->values[conv.inputs[2]]);
      if (!b.ok()) return b.status();
      if (b->size() != out_channels) continue;
      bias = *b;
    }
    const float eps = bn->FloatAttr("epsilon", 1e-5f);
    const size_t per_channel = w->size() / out_channels;
    for (size_t o = 0; o < out_channels; ++o) {
      const float k = (*scale)[o] / std::sqrt((*var)[o] + eps);
      for (size_t i = 0; i < per_channel; ++i) (*w)[o * per_channel + i] *= k;
      bias[o] = (bias[o] - (*mean)[o]) * k + (*shift)[o];
    }
    const IrValue& old_w = ir->values[conv.inputs[1]];
    const int new_w = ir->AddWeight(old_w.name + ".bn_folded", old_w.info, ToBytes(*w));
    graph::TensorInfo bias_info{
        onnx::TensorProto::FLOAT,
        graph::Shape{true, {graph::Dim{.value = static_cast<int64_t>(out_channels)}}}};
    const int new_b =
        ir->AddWeight(ir->values[bn->inputs[1]].name + ".conv_bias", bias_info, ToBytes(bias));
    conv.inputs.resize(3);
    conv.inputs[1] = new_w;
    conv.inputs[2] = new_b;
    conv.outputs[0] = bn->outputs[0];  // the Conv now writes what the BN wrote
    bn->removed = true;
    ++folded;
  }
  if (folded) ir->Compact();
  return folded;
}

Result<int> PretransposeGemmWeights(SubgraphIr* ir) {
  int packed = 0;
  for (auto& op : ir->ops) {
    if (op.removed || op.op_type != "Gemm" || !op.domain.empty() || op.inputs.size() < 2) continue;
    if (op.IntAttr("transB", 0) == 0 || !IsConstFloat(*ir, op.inputs[1])) continue;
    const IrValue& b = ir->values[op.inputs[1]];
    if (b.info.shape.dims.size() != 2) continue;
    const int64_t n = b.info.shape.dims[0].value, k = b.info.shape.dims[1].value;
    auto data = Floats(b);
    if (!data.ok()) return data.status();
    std::vector<float> t(data->size());
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t c = 0; c < k; ++c) t[c * n + r] = (*data)[r * k + c];
    }
    graph::TensorInfo info{b.info.dtype,
                           graph::Shape{true, {graph::Dim{.value = k}, graph::Dim{.value = n}}}};
    op.inputs[1] = ir->AddWeight(b.name + ".kn", info, ToBytes(t));
    op.SetIntAttr("transB", 0);
    ++packed;
  }
  if (packed) ir->Compact();
  return packed;
}

}  // namespace ortc::lowering
