// Expansion of com.microsoft MatMulNBits (GenAI's int4 weight-only models), with the semantics of
// ONNX Runtime's contrib op documentation and CPU kernel: the packed 4-bit blocks are unpacked
// and dequantized by standard ops, which constant folding turns into a float weight when the
// weights are initializers (they always are in exported models), then one MatMul.
#include "graph/contrib_expansions.h"

namespace ortc::graph::contrib {
namespace {

using T = onnx::TensorProto;

// uint8 bytes [..., n] -> their 4-bit halves [..., 2n], low nibble first, as float.
std::string UnpackNibbles(Emitter& e, const std::string& bytes, const std::vector<int64_t>& shape,
                          const std::string& tag) {
  const std::string sixteen = e.ScalarOf(tag + "_sixteen", T::UINT8, 16);
  const std::string low = e.Op("Mod", {bytes, sixteen}, tag + "_low");
  const std::string high = e.Op("Div", {bytes, sixteen}, tag + "_high");
  const std::string pairs =
      e.Op("Concat",
           {e.Unsqueeze(low, {-1}, tag + "_low_pair"), e.Unsqueeze(high, {-1}, tag + "_high_pair")},
           tag + "_pairs", {IntAttribute("axis", -1)});
  return e.Cast(e.Reshape(pairs, shape, tag + "_unpacked"), T::FLOAT, tag + "_float");
}

}  // namespace

// MatMulNBits(A, B, scales, zero_points?, g_idx?, bias?) -> Y = A @ dequant(B)^T + bias, B uint8
// [N, blocks, block_size / 2] (two 4-bit values a byte), scales [N * blocks], zero points packed
// uint8 [N * ceil(blocks / 2)] or of the scales' type [N * blocks] (8 when absent).
Status ExpandMatMulNBits(const NodeView& v, Expansion* x) {
  if (!v.Has(0) || !v.Has(1) || !v.Has(2)) return v.Invalid("needs A, B and scales");
  const int64_t K = v.IntAttr("K", 0), N = v.IntAttr("N", 0), bits = v.IntAttr("bits", 4),
                block = v.IntAttr("block_size", 0);
  if (bits != 4)
    return v.Unsupported("bits " + std::to_string(bits) + " (only 4-bit weights are supported)",
                         "quantize the weights to 4 bits");
  if (K <= 0 || N <= 0 || block < 16 || (block & (block - 1)) != 0)
    return v.Invalid("K and N must be positive and block_size a power of two from 16");
  if (v.Has(4)) return v.Unsupported("g_idx (act-order groups)", "export without act-order");
  const int64_t blocks = (K + block - 1) / block;
  const Facts b = v.InFacts(1), zp = v.InFacts(3);
  if (b.dtype != 0 && b.dtype != T::UINT8) return v.Invalid("B must be uint8");
  if (v.Has(3) && zp.dtype == 0) {
    if (!v.force()) return Status::Ok();
    return v.Unsupported("zero points of unknown type", "give them as an initializer");
  }
  const int32_t t = v.FloatType({0, 2});
  if (t == 0) return Status::Ok();
  Emitter& e = x->Begin(t);
  const std::string q = UnpackNibbles(e, v.In(1), {N, blocks, block}, "weights");
  std::string zero;
  if (!v.Has(3)) {
    zero = e.ScalarOf("zero_point", T::FLOAT, 8);
  } else if (zp.dtype == T::UINT8) {
    const int64_t packed = (blocks + 1) / 2;
    const std::string all = e.Reshape(UnpackNibbles(e, v.In(3), {N, 2 * packed}, "zeros"),
                                      {N, 2 * packed}, "zeros_rows");
    const std::string first = e.Op("Slice",
                                   {all, e.Int64s("zeros_start", {0}),
                                    e.Int64s("zeros_end", {blocks}), e.Int64s("zeros_axis", {1})},
                                   "zeros_used");
    zero = e.Reshape(first, {N, blocks, 1}, "zero_point");
  } else {
    zero = e.Reshape(e.Cast(v.In(3), T::FLOAT, "zeros_float"), {N, blocks, 1}, "zero_point");
  }
  const std::string scales =
      e.Reshape(e.Cast(v.In(2), T::FLOAT, "scales_float"), {N, blocks, 1}, "scales");
  const std::string w = e.Op("Mul", {e.Op("Sub", {q, zero}, "centered"), scales},
                             "dequantized");  // [N, blocks, block]
  std::string rows = e.Reshape(w, {N, blocks * block}, "rows");
  if (blocks * block != K)  // the last block's padding
    rows = e.Op("Slice",
                {rows, e.Int64s("k_start", {0}), e.Int64s("k_end", {K}), e.Int64s("k_axis", {1})},
                "rows_k");
  std::string weight = e.Transpose(rows, {1, 0}, "weight");  // [K, N]
  if (t != T::FLOAT) weight = e.Cast(weight, t, "weight_cast");
  if (!v.Has(5)) {
    e.Op("MatMul", {v.In(0), weight}, "matmul", {}, v.Out(0));
  } else {
    e.Op("Add", {e.Op("MatMul", {v.In(0), weight}, "matmul"), v.In(5)}, "bias", {}, v.Out(0));
  }
  return Status::Ok();
}

}  // namespace ortc::graph::contrib
