// RotaryEmbedding, an op the lowering forms (lowering_rotary.cpp): rotary position embedding of
// x read through a strided view, written contiguous, one thread per output element.
//
// Inputs: x (the view's source), cos, sin. Attributes: x_shape (logical [batch, heads, rows,
// cols], 4 ints), x_strides (4 ints, elements), x_offset, x_head_group (head h reads source head
// h / group), as lowering_views.h fits them; rotary_dim R (even, at most cols; default cols).
// cos and sin broadcast (numpy rules, right-aligned) over [batch, heads, rows, W], W = R (a table
// per column, as Llama-family code builds it) or R / 2 (one entry per rotated pair, as ONNX
// Runtime's cos_cache/sin_cache hold it: column c reads entry c mod R / 2). Output: the view's
// shape (rank 1 to 4, right-aligned in 4-D), contiguous, with h = R / 2 and t(c) the table
// column:
//   y[.., c] = x[.., c] * cos[.., t(c)] - x[.., c + h] * sin[.., t(c)]   for c < h
//   y[.., c] = x[.., c] * cos[.., t(c)] + x[.., c - h] * sin[.., t(c)]   for h <= c < R
//   y[.., c] = x[.., c]                                                  for c >= R (partial)
// which is q * cos + rotate_half(q) * sin as Llama-family code writes it. Math in fp32 whatever
// the storage types.
#include <array>
#include <sstream>

#include "cuda/compile/codegen/emitters.h"
#include "cuda/compile/codegen/kernel_text.h"

namespace ortc::backends::cuda::codegen {
namespace {

constexpr size_t kX = 0, kCos = 1, kSin = 2;

struct Rotary {
  std::array<int64_t, 4> shape{}, strides{};
  int64_t offset = 0, head_group = 1, rotary_dim = 0;
  int64_t table_width = 0;                              // rotary_dim or rotary_dim / 2
  std::array<int64_t, 4> cos_strides{}, sin_strides{};  // over [batch, heads, rows, W]
};

// Strides of `dims` (right-aligned in 4-D) broadcast over `to`; false when it does not
// broadcast.
bool BroadcastOver(const std::vector<int64_t>& dims, const std::array<int64_t, 4>& to,
                   std::array<int64_t, 4>* strides) {
  if (dims.size() > 4) return false;
  const size_t pad = 4 - dims.size();
  int64_t stride = 1;
  for (size_t a = 4; a-- > 0;) {
    const int64_t d = a < pad ? 1 : dims[a - pad];
    if (d != 1 && d != to[a]) return false;
    (*strides)[a] = d == 1 ? 0 : stride;
    stride *= d;
  }
  return true;
}

Result<Rotary> RotaryOf(const OpDesc& op) {
  const auto shape = IntsAttr(op, "x_shape"), strides = IntsAttr(op, "x_strides");
  // The ONNX operator of this name (opset 23) reads positions and caches, not a view: only the
  // form the lowering writes is generated.
  if (shape.empty() && strides.empty())
    return NotImplemented(
        "RotaryEmbedding: only ortc's fused form (x read through x_shape/x_strides) has a "
        "kernel");
  if (op.inputs.size() != 3 || op.outputs.size() != 1)
    return InvalidArgument("RotaryEmbedding takes x, cos, sin and has one output");
  for (const auto& t : {op.inputs[kX], op.inputs[kCos], op.inputs[kSin], op.outputs[0]}) {
    if (!IsFloatType(t.dtype)) return InvalidArgument("RotaryEmbedding: tensors must be float");
  }
  if (shape.size() != 4 || strides.size() != 4)
    return InvalidArgument("RotaryEmbedding: x_shape and x_strides need 4 values");
  Rotary r;
  r.offset = IntAttr(op, "x_offset", 0);
  r.head_group = IntAttr(op, "x_head_group", 1);
  if (r.head_group < 1 || shape[1] < 1 || shape[1] % r.head_group != 0)
    return InvalidArgument("RotaryEmbedding: x_head_group must divide the heads");
  const int64_t source = op.inputs[kX].elements(), count = op.outputs[0].elements();
  int64_t last = r.offset, n = 1;
  for (int a = 0; a < 4; ++a) {
    // Bounded before multiplying: n stays within the shape bound (2^40), a stride within the
    // source.
    if (shape[a] < 1 || shape[a] > (int64_t{1} << 40) / n || strides[a] < 0 || strides[a] > source)
      return InvalidArgument("RotaryEmbedding: bad x view");
    r.shape[a] = shape[a];
    r.strides[a] = shape[a] == 1 ? 0 : strides[a];
    n *= shape[a];
    last += ((a == 1 ? shape[a] / r.head_group : shape[a]) - 1) * r.strides[a];
  }
  if (r.offset < 0 || last >= source)
    return InvalidArgument("RotaryEmbedding: the x view reaches outside its input");
  const auto& out = op.outputs[0].dims;
  bool same = n == count && out.size() >= 1 && out.size() <= 4;
  for (size_t a = 0; same && a < 4; ++a)
    same = r.shape[a] == (a < 4 - out.size() ? 1 : out[a - (4 - out.size())]);
  if (!same) return InvalidArgument("RotaryEmbedding: the output must have the x view's shape");
  r.rotary_dim = IntAttr(op, "rotary_dim", r.shape[3]);
  if (r.rotary_dim < 2 || r.rotary_dim % 2 != 0 || r.rotary_dim > r.shape[3])
    return InvalidArgument("RotaryEmbedding: rotary_dim must be even, from 2 to the head size");
  const auto& cos = op.inputs[kCos].dims;
  r.table_width = cos.empty() ? 0 : cos.back();
  const std::array<int64_t, 4> table = {r.shape[0], r.shape[1], r.shape[2], r.table_width};
  if ((r.table_width != r.rotary_dim && 2 * r.table_width != r.rotary_dim) ||
      op.inputs[kSin].dims.empty() || op.inputs[kSin].dims.back() != r.table_width ||
      !BroadcastOver(cos, table, &r.cos_strides) ||
      !BroadcastOver(op.inputs[kSin].dims, table, &r.sin_strides))
    return InvalidArgument(
        "RotaryEmbedding: cos and sin must end in rotary_dim (or half of it) and broadcast over "
        "the view");
  return r;
}

// `b * s[0] + h * s[1] + r * s[2] + c * s[3]` without the terms of zero stride; `h` stands for
// the head index expression given.
std::string Linear(const std::array<int64_t, 4>& s, const std::string& head,
                   const std::string& col) {
  const std::array<std::string, 4> idx = {"b", head, "r", col};
  std::string e;
  for (int a = 0; a < 4; ++a) {
    if (s[a] == 0) continue;
    e += (e.empty() ? "" : " + ") + ("(" + idx[a] + ") * " + IntLiteral(s[a]));
  }
  return e.empty() ? "0" : e;
}

}  // namespace

bool IsRotaryOp(const std::string& op_type) {
  return op_type == "RotaryEmbedding";
}

std::string RotaryUnsupported(const OpDesc& op) {
  auto r = RotaryOf(op);
  return r.ok() ? "" : r.status().message();
}

Result<KernelSource> EmitRotary(const std::string& name, const OpDesc& op) {
  auto rr = RotaryOf(op);
  if (!rr.ok()) return rr.status();
  const Rotary& r = *rr;
  const int64_t n = op.outputs[0].elements(), cols = r.shape[3], half = r.rotary_dim / 2;
  const std::string head = r.head_group == 1 ? "h" : "h / " + IntLiteral(r.head_group);
  auto load = [&](size_t i, const std::string& index) {
    return LoadExpr(op.inputs[i].dtype, "in" + std::to_string(i) + "[" + index + "]");
  };
  std::ostringstream c;
  c << "extern \"C\" __global__ void " << name << "(" << KernelParams(3, 1) << ") {\n";
  for (size_t i = 0; i < 3; ++i) {
    const std::string t = StorageCType(op.inputs[i].dtype);
    c << "  const " << t << "* __restrict__ in" << i << " = (const " << t << "*)p" << i << ";\n";
  }
  const std::string ot = StorageCType(op.outputs[0].dtype);
  c << "  " << ot << "* __restrict__ out0 = (" << ot << "*)p3;\n"
    << "  for (ortc_i64 i = (ortc_i64)blockIdx.x * blockDim.x + threadIdx.x; i < " << IntLiteral(n)
    << "; i += (ortc_i64)gridDim.x * blockDim.x) {\n"
    << "    const ortc_i64 c = i % " << IntLiteral(cols) << ", row = i / " << IntLiteral(cols)
    << ";\n"
    << "    const ortc_i64 r = row % " << IntLiteral(r.shape[2]) << ", h = (row / "
    << IntLiteral(r.shape[2]) << ") % " << IntLiteral(r.shape[1]) << ", b = row / "
    << IntLiteral(r.shape[2] * r.shape[1]) << ";\n"
    << "    const ortc_i64 base = " << IntLiteral(r.offset) << " + "
    << Linear({r.strides[0], r.strides[1], r.strides[2], 0}, head, "c") << ";\n"
    << "    const ortc_i64 sc = " << IntLiteral(r.strides[3]) << ";\n"
    << "    float y = " << load(kX, "base + c * sc") << ";\n";
  // Columns past rotary_dim pass through (partial rotary): no table read for them.
  const bool partial = r.rotary_dim < cols;
  const std::string indent = partial ? "      " : "    ";
  if (partial) c << "    if (c < " << IntLiteral(r.rotary_dim) << ") {\n";
  c << indent << "const float other = c < " << IntLiteral(half) << " ? -"
    << load(kX, "base + (c + " + IntLiteral(half) + ") * sc") << " : "
    << load(kX, "base + (c - " + IntLiteral(half) + ") * sc") << ";\n"
    << indent << "const ortc_i64 t = "
    << (r.table_width == r.rotary_dim
            ? "c"
            : "c < " + IntLiteral(half) + " ? c : c - " + IntLiteral(half))
    << ";\n"
    << indent << "y = y * " << load(kCos, Linear(r.cos_strides, "h", "t")) << " + other * "
    << load(kSin, Linear(r.sin_strides, "h", "t")) << ";\n";
  if (partial) c << "    }\n";
  c << "    out0[i] = " << StoreExpr(op.outputs[0].dtype, "y") << ";\n"
    << "  }\n}\n";
  KernelSource k;
  k.name = name;
  k.source = c.str();
  k.grid = {GridFor(n), 1, 1};
  k.block = {kBlockSize, 1, 1};
  k.num_inputs = 3;
  k.num_outputs = 1;
  return k;
}

}  // namespace ortc::backends::cuda::codegen
