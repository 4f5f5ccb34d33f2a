// The generated parts of attention lowered onto tensor-core GEMMs (lowering_attention_gemm.cpp):
//  - AttentionSoftmax: p = softmax over the last axis of Where(cond == keep_if_true,
//    scale * s + mask, fill) (or Where(.., scale * s, fill) + mask with mask_after_where), one
//    block per row, fp32 math; a row whose every value is -inf
//    becomes zeros (SDPA's IsNaN guard, and what FusedAttention writes);
//  - StridedView: a contiguous copy of a strided view of its input (shape, strides, offset and a
//    head group, as lowering_views.h fits them), so a GEMM reads Q, K^T or V as plain batched
//    matrices.
#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>

#include "cuda/compile/codegen/emitters.h"
#include "cuda/compile/codegen/kernel_text.h"

namespace ortc::backends::cuda::codegen {
namespace {

constexpr size_t kScores = 0, kMask = 1, kCond = 2;

bool Present(const OpDesc& op, size_t i) {
  return i < op.inputs.size() && op.inputs[i].dtype != 0;
}

std::vector<int64_t> Contiguous(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

// Strides of a tensor broadcast (numpy rules) over `to`; empty when it does not broadcast.
std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& dims,
                                      const std::vector<int64_t>& to) {
  if (dims.size() > to.size()) return {};
  const auto st = Contiguous(dims);
  std::vector<int64_t> out(to.size(), 0);
  const size_t pad = to.size() - dims.size();
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] != 1 && dims[i] != to[pad + i]) return {};
    out[pad + i] = dims[i] == 1 ? 0 : st[i];
  }
  return out;
}

std::string SoftmaxUnsupported(const OpDesc& op) {
  if (op.inputs.size() != 3 || op.outputs.size() != 1)
    return "AttentionSoftmax takes scores, mask, cond and has one output";
  const auto& s = op.inputs[kScores];
  if (!IsFloatType(s.dtype) || s.dims.size() < 2 || s.dims.size() > 4)
    return "AttentionSoftmax: scores must be float of rank 2 to 4";
  if (op.outputs[0].dims != s.dims || !IsFloatType(op.outputs[0].dtype))
    return "AttentionSoftmax: the output must have the scores' shape";
  if (Present(op, kMask) && (!IsFloatType(op.inputs[kMask].dtype) ||
                             BroadcastStrides(op.inputs[kMask].dims, s.dims).empty()))
    return "AttentionSoftmax: the mask must be float and broadcast over the scores";
  if (Present(op, kCond) && (op.inputs[kCond].dtype != onnx::TensorProto::BOOL ||
                             BroadcastStrides(op.inputs[kCond].dims, s.dims).empty()))
    return "AttentionSoftmax: the condition must be bool and broadcast over the scores";
  return "";
}

// Offset of (row, key) in a broadcast operand: `row` walks every axis but the last.
std::string BroadcastIndex(const std::vector<int64_t>& strides, const std::vector<int64_t>& dims) {
  std::string idx = "(k * " + IntLiteral(strides.back()) + ")";
  std::string rest = "row";
  for (size_t a = dims.size() - 1; a-- > 0;) {
    if (strides[a] != 0)
      idx += " + ((" + rest + ") % " + IntLiteral(dims[a]) + ") * " + IntLiteral(strides[a]);
    rest = "(" + rest + ") / " + IntLiteral(dims[a]);
  }
  return idx;
}

Result<KernelSource> EmitSoftmax(const std::string& name, const OpDesc& op) {
  if (std::string why = SoftmaxUnsupported(op); !why.empty()) return InvalidArgument(why);
  const auto& dims = op.inputs[kScores].dims;
  const int64_t keys = dims.back();
  int64_t rows = 1;
  for (size_t a = 0; a + 1 < dims.size(); ++a) rows *= dims[a];
  const uint32_t block = RowBlockSize(keys);
  const float scale = FloatAttr(op, "scale", 1.f), fill = FloatAttr(op, "fill", 0.f);
  const bool keep = IntAttr(op, "keep_if_true", 1) != 0;
  std::ostringstream c;
  c << "extern \"C\" __global__ void " << name << "(" << KernelParams(3, 1) << ") {\n";
  for (size_t i = 0; i < 3; ++i) {
    if (!Present(op, i)) continue;
    const std::string t = StorageCType(op.inputs[i].dtype);
    c << "  const " << t << "* __restrict__ in" << i << " = (const " << t << "*)p" << i << ";\n";
  }
  const std::string ot = StorageCType(op.outputs[0].dtype);
  c << "  " << ot << "* __restrict__ out0 = (" << ot << "*)p3;\n"
    << "  __shared__ float red[" << block << "];\n"
    << "  for (ortc_i64 row = blockIdx.x; row < " << IntLiteral(rows) << "; row += gridDim.x) {\n"
    << "    const ortc_i64 base = row * " << IntLiteral(keys) << ";\n";
  // The transformed score of key k, as an expression.
  std::string v = LoadExpr(op.inputs[kScores].dtype, "in0[base + k]");
  if (scale != 1.f) v = "(" + v + " * " + FloatLiteral(scale) + ")";
  // The mask is added to the scaled score before the Where, or (mask_after_where, as eager
  // GPT-2 writes it) to what the Where leaves, the fill included.
  const bool mask_last = IntAttr(op, "mask_after_where", 0) != 0;
  auto add_mask = [&] {
    if (!Present(op, kMask)) return;
    const auto st = BroadcastStrides(op.inputs[kMask].dims, dims);
    v = "(" + v + " + " +
        LoadExpr(op.inputs[kMask].dtype, "in1[" + BroadcastIndex(st, dims) + "]") + ")";
  };
  if (!mask_last) add_mask();
  if (Present(op, kCond)) {
    const auto st = BroadcastStrides(op.inputs[kCond].dims, dims);
    v = "((in2[" + BroadcastIndex(st, dims) + "] != 0) == " + (keep ? "true" : "false") + " ? " +
        v + " : " + FloatLiteral(fill) + ")";
  }
  if (mask_last) add_mask();
  const std::string loop = "    for (ortc_i64 k = threadIdx.x; k < " + IntLiteral(keys) +
                           "; k += " + std::to_string(block) + ")";
  c << "    float peak = " << FloatLiteral(-INFINITY) << ";\n"
    << loop << " peak = fmaxf(peak, " << v << ");\n"
    << BlockReduceCode("peak", "fmaxf", block, "    ") << "    float sum = 0.f;\n"
    << "    if (peak != " << FloatLiteral(-INFINITY) << ") {\n"
    << "  " << loop << " sum += expf(" << v << " - peak);\n"
    << "    }\n"
    << BlockReduceCode("sum", "ortc_add", block, "    ")
    << "    const float inv = sum > 0.f ? 1.f / sum : 0.f;\n"
    << loop << " out0[base + k] = "
    << StoreExpr(op.outputs[0].dtype,
                 "(peak == " + FloatLiteral(-INFINITY) + " ? 0.f : expf(" + v + " - peak) * inv)")
    << ";\n"
    << "  }\n}\n";
  KernelSource k;
  k.name = name;
  k.source = c.str();
  k.grid = {static_cast<uint32_t>(std::min<int64_t>(std::max<int64_t>(rows, 1), 65535)), 1, 1};
  k.block = {block, 1, 1};
  k.num_inputs = 3;
  k.num_outputs = 1;
  k.uses_block_sync = true;
  return k;
}

struct Strided {
  std::array<int64_t, 4> shape{}, strides{};
  int64_t offset = 0, head_group = 1;
};

Result<Strided> StridedOf(const OpDesc& op) {
  if (op.inputs.size() != 1 || op.outputs.size() != 1 || !Present(op, 0))
    return InvalidArgument("StridedView takes one input and has one output");
  const auto shape = IntsAttr(op, "shape"), strides = IntsAttr(op, "strides");
  if (shape.size() != 4 || strides.size() != 4)
    return InvalidArgument("StridedView: shape and strides need 4 values");
  Strided s;
  s.offset = IntAttr(op, "offset", 0);
  s.head_group = IntAttr(op, "head_group", 1);
  if (s.head_group < 1 || shape[1] % s.head_group != 0)
    return InvalidArgument("StridedView: head_group must divide axis 1");
  int64_t last = s.offset, count = 1;
  for (int a = 0; a < 4; ++a) {
    if (shape[a] < 1 || strides[a] < 0) return InvalidArgument("StridedView: bad view");
    s.shape[a] = shape[a];
    s.strides[a] = strides[a];
    last += ((a == 1 ? shape[a] / s.head_group : shape[a]) - 1) * strides[a];
    count *= shape[a];
  }
  if (s.offset < 0 || last >= op.inputs[0].elements())
    return InvalidArgument("StridedView: the view reaches outside its input");
  if (count != op.outputs[0].elements() || op.outputs[0].dtype != op.inputs[0].dtype)
    return InvalidArgument("StridedView: the output must hold the view's elements, same type");
  return s;
}

Result<KernelSource> EmitStridedView(const std::string& name, const OpDesc& op) {
  auto s = StridedOf(op);
  if (!s.ok()) return s.status();
  const int64_t n = op.outputs[0].elements();
  const std::string t = StorageCType(op.inputs[0].dtype);
  const auto& sh = s->shape;
  std::ostringstream c;
  c << "extern \"C\" __global__ void " << name << "(" << KernelParams(1, 1) << ") {\n"
    << "  const " << t << "* __restrict__ in0 = (const " << t << "*)p0;\n"
    << "  " << t << "* __restrict__ out0 = (" << t << "*)p1;\n"
    << "  for (ortc_i64 i = (ortc_i64)blockIdx.x * blockDim.x + threadIdx.x; i < " << IntLiteral(n)
    << "; i += (ortc_i64)gridDim.x * blockDim.x) {\n"
    << "    const ortc_i64 c = i % " << IntLiteral(sh[3]) << ", r = (i / " << IntLiteral(sh[3])
    << ") % " << IntLiteral(sh[2]) << ";\n"
    << "    const ortc_i64 h = (i / " << IntLiteral(sh[3] * sh[2]) << ") % " << IntLiteral(sh[1])
    << ", b = i / " << IntLiteral(sh[3] * sh[2] * sh[1]) << ";\n"
    << "    out0[i] = in0[" << IntLiteral(s->offset) << " + b * " << IntLiteral(s->strides[0])
    << " + (h / " << IntLiteral(s->head_group) << ") * " << IntLiteral(s->strides[1]) << " + r * "
    << IntLiteral(s->strides[2]) << " + c * " << IntLiteral(s->strides[3]) << "];\n"
    << "  }\n}\n";
  KernelSource k;
  k.name = name;
  k.source = c.str();
  k.grid = {GridFor(n), 1, 1};
  k.block = {kBlockSize, 1, 1};
  k.num_inputs = 1;
  k.num_outputs = 1;
  return k;
}

}  // namespace

bool IsAttentionPartOp(const std::string& op_type) {
  return op_type == "AttentionSoftmax" || op_type == "StridedView";
}

std::string AttentionPartUnsupported(const OpDesc& op) {
  if (op.op_type == "AttentionSoftmax") return SoftmaxUnsupported(op);
  auto s = StridedOf(op);
  return s.ok() ? "" : s.status().message();
}

Result<KernelSource> EmitAttentionPart(const std::string& name, const OpDesc& op) {
  if (op.op_type == "AttentionSoftmax") return EmitSoftmax(name, op);
  return EmitStridedView(name, op);
}

}  // namespace ortc::backends::cuda::codegen
