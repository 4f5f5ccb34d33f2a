// Compile-time packing of convolution weights for oneDNN.
#include "cpu/compile/weight_packing.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>

#include "base/shape_limit.h"
#include "cpu/runtime/kernels/fused_activation.h"
#include "cpu/runtime/kernels/onednn_conv.h"

namespace ortc::backends::cpu {
namespace {

using lowering::IrOp;
using lowering::SubgraphIr;
using lowering::ValueKind;

// Static sizes of a value, or empty when any is unknown.
std::vector<int64_t> StaticDims(const SubgraphIr& ir, int v) {
  const auto& s = ir.values[v].info.shape;
  if (!s.rank_known || !s.is_static()) return {};
  return s.Sizes();
}

std::vector<int64_t> IntsAttr(const IrOp& op, const std::string& name, std::vector<int64_t> dflt) {
  const auto* a = op.Attr(name);
  if (!a) return dflt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

// The fused steps as the runtime reads them, from the op's attributes.
Result<exec::FusedActivation> StepsOf(const IrOp& op) {
  exec::ExecOp tmp;
  tmp.name = op.name;
  if (const auto* names = op.Attr("activations")) {
    exec::Attribute a;
    a.kind = exec::Attribute::Kind::kStrings;
    a.strings.assign(names->strings().begin(), names->strings().end());
    tmp.attrs["activations"] = a;
  }
  if (const auto* params = op.Attr("activation_params")) {
    exec::Attribute a;
    a.kind = exec::Attribute::Kind::kFloats;
    a.floats.assign(params->floats().begin(), params->floats().end());
    tmp.attrs["activation_params"] = a;
  }
  return exec::ReadFusedActivation(tmp);
}

// The runtime's geometry for a convolution with static shapes and explicit pads; false when the
// op is not one the runtime would hand to oneDNN with constant weights.
bool GeometryOf(const SubgraphIr& ir, const IrOp& op, exec::ConvGeometry* g) {
  if ((op.op_type != "Conv" && op.op_type != "FusedConv") || !op.domain.empty() ||
      op.inputs.size() < 2 || op.outputs.size() != 1)
    return false;
  const int w = op.inputs[1];
  if (w < 0 || ir.values[w].kind != ValueKind::kWeight || !ir.values[w].bytes ||
      ir.values[w].info.dtype != onnx::TensorProto::FLOAT ||
      ir.values[op.inputs[0]].info.dtype != onnx::TensorProto::FLOAT)
    return false;
  const auto* auto_pad = op.Attr("auto_pad");
  const std::string pad_mode = auto_pad ? auto_pad->s() : "NOTSET";
  if (pad_mode != "NOTSET" && pad_mode != "VALID") return false;
  const auto x = StaticDims(ir, op.inputs[0]), wd = StaticDims(ir, w),
             y = StaticDims(ir, op.outputs[0]);
  if (x.size() < 3 || x.size() > 5 || wd.size() != x.size() || y.size() != x.size()) return false;
  // Declared sizes and attributes go into oneDNN's descriptor arithmetic: only ones a runtime
  // tensor can have, and windows within 2^31, are packed (the rest stays plain).
  if (!exec::ShapeWithinLimit(x) || !exec::ShapeWithinLimit(wd) || !exec::ShapeWithinLimit(y))
    return false;
  const bool cl = op.IntAttr("channels_last", 0) != 0;
  const bool x_nhwc = cl && op.IntAttr("input_channels_first", 0) == 0;
  if (cl && x.size() != 4) return false;
  const size_t nsp = x.size() - 2;
  g->batch = x[0];
  g->in_channels = x_nhwc ? x[3] : x[1];
  g->out_channels = wd[0];
  g->group = op.IntAttr("group", 1);
  g->in = x_nhwc ? std::vector<int64_t>{x[1], x[2]} : std::vector<int64_t>(x.begin() + 2, x.end());
  g->out = cl ? std::vector<int64_t>{y[1], y[2]} : std::vector<int64_t>(y.begin() + 2, y.end());
  g->kernel.assign(wd.begin() + 2, wd.end());
  g->strides = IntsAttr(op, "strides", std::vector<int64_t>(nsp, 1));
  g->dilations = IntsAttr(op, "dilations", std::vector<int64_t>(nsp, 1));
  auto pads = IntsAttr(op, "pads", std::vector<int64_t>(2 * nsp, 0));
  if (pad_mode == "VALID") pads.assign(2 * nsp, 0);
  if (g->strides.size() != nsp || g->dilations.size() != nsp || pads.size() != 2 * nsp)
    return false;
  constexpr int64_t kMaxWindow = int64_t{1} << 31;
  auto within = [](const std::vector<int64_t>& v, int64_t lo) {
    return std::all_of(v.begin(), v.end(), [&](int64_t e) { return e >= lo && e <= kMaxWindow; });
  };
  if (!within(g->strides, 1) || !within(g->dilations, 1) || !within(pads, 0)) return false;
  g->pads_begin.assign(pads.begin(), pads.begin() + nsp);
  g->pads_end.assign(pads.begin() + nsp, pads.end());
  g->channels_last = cl;
  g->input_nchw = cl && !x_nhwc;
  const auto* precision = op.Attr("compute_precision");
  g->bf16 = precision && precision->s() == "bf16";
  const auto* algorithm = op.Attr("conv_algorithm");
  if (algorithm) g->algorithm = exec::ParseConvAlgorithm(algorithm->s());
  return g->group > 0 && g->in_channels % g->group == 0 && g->out_channels % g->group == 0 &&
         wd[1] == g->in_channels / g->group;
}

}  // namespace

Result<std::string> ResolveTargetIsa(const std::string& isa) {
  if (isa.empty() || isa == "portable") return std::string();
  if (isa == "native") {
    const std::string best = exec::OneDnnEffectiveIsa();
    if (best.empty())
      return InvalidArgument(
          "--target-isa native: this CPU has none of the ISAs ortc packs for "
          "(avx2 and up); use --target-isa portable");
    return best;
  }
  ORTC_RETURN_IF_ERROR(exec::LimitOneDnnIsa(isa));
  return isa;
}

Result<int> PackConvWeightsForIsa(SubgraphIr* ir, const std::string& isa) {
  auto resolved = ResolveTargetIsa(isa);
  if (!resolved.ok()) return resolved.status();
  if (resolved->empty()) return 0;
  int packed = 0;
  for (auto& op : ir->ops) {
    exec::ConvGeometry g;
    if (op.removed || !GeometryOf(*ir, op, &g)) continue;
    auto steps = StepsOf(op);
    if (!steps.ok()) return steps.status();
    const int w = op.inputs[1];
    auto bytes = ir->values[w].bytes->ReadAll();
    if (!bytes.ok()) return bytes.status();
    std::vector<float> weights((*bytes)->size() / sizeof(float));
    std::memcpy(weights.data(), (*bytes)->data(), weights.size() * sizeof(float));
    const bool has_bias = op.inputs.size() > 2 && op.inputs[2] >= 0;
    const bool has_residual = op.inputs.size() > 3 && op.inputs[3] >= 0;
    auto result = exec::PackConvWeights(g, has_bias, has_residual, *steps, weights.data());
    if (!result.ok()) continue;  // left plain: the runtime decides at its first run
    if (!result->changed) continue;
    std::vector<int64_t> w_shape;
    for (const auto& d : ir->values[w].info.shape.dims) w_shape.push_back(d.value);
    graph::TensorInfo info;
    info.dtype = onnx::TensorProto::UINT8;
    info.shape.rank_known = true;
    info.shape.dims = {graph::Dim{static_cast<int64_t>(result->bytes.size()), ""}};
    const std::string name = ir->values[w].name + ".packed_" + *resolved;
    op.inputs[1] =
        ir->AddWeight(name, info, std::make_shared<const std::string>(std::move(result->bytes)));
    op.SetIntsAttr("weight_shape", w_shape);
    op.SetStringAttr("packed_weights_desc", result->desc);
    op.SetStringAttr("packed_by", "oneDNN " + exec::OneDnnVersion());
    op.SetStringAttr("packed_for_isa", *resolved);
    ++packed;
  }
  if (packed > 0) ir->Compact();
  return packed;
}

}  // namespace ortc::backends::cpu
