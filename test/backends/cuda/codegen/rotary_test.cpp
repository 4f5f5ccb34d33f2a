// RotaryEmbedding (formed by lowering_rotary.cpp) through the host shim against a float64
// reference written here: x read through strided views (the Q and K head slices of a packed
// QKV projection, repeated heads, a plain tensor), cos/sin tables of shapes [S, D],
// [1, 1, S, D] and [B, 1, S, D], partial rotary, fp32/fp16/bf16 storage; and its refusals.
#include <array>
#include <cmath>
#include <cstring>

#include "data_movement_test_util.h"
#include "reference_conversions.h"
#include "test_data.h"

namespace ortc::test::cuda {
namespace {

constexpr int32_t F16 = TensorProto::FLOAT16, BF16 = TensorProto::BFLOAT16;

struct RotaryCase {
  std::vector<int64_t> source;                     // x's source tensor
  std::vector<int64_t> shape, strides;             // the view [b, heads, rows, cols]
  int64_t offset = 0, head_group = 1, rotary = 0;  // rotary 0: every column
  std::vector<int64_t> table;                      // cos and sin dims
  std::vector<int64_t> out;                        // output dims (default: the view's shape)
};

int64_t Count(const std::vector<int64_t>& d) {
  int64_t n = 1;
  for (int64_t e : d) n *= e;
  return n;
}

// Values as stored in `dtype` (rounded to nearest even) and read back exactly.
std::vector<double> Stored(const std::vector<float>& v, int32_t dtype, std::string* bytes) {
  std::vector<double> back;
  bytes->clear();
  for (float f : v) {
    if (dtype == F) {
      bytes->append(reinterpret_cast<const char*>(&f), 4);
      back.push_back(f);
      continue;
    }
    const uint16_t h = dtype == F16 ? RefFloatToHalf(f) : RefFloatToBf16(f);
    bytes->append(reinterpret_cast<const char*>(&h), 2);
    back.push_back(dtype == F16 ? RefHalfToFloat(h) : RefBf16ToFloat(h));
  }
  return back;
}

std::vector<double> Loaded(const std::string& bytes, int32_t dtype) {
  std::vector<double> out;
  const size_t width = dtype == F ? 4 : 2;
  for (size_t i = 0; i + width <= bytes.size(); i += width) {
    if (dtype == F) {
      float f;
      std::memcpy(&f, bytes.data() + i, 4);
      out.push_back(f);
      continue;
    }
    uint16_t h;
    std::memcpy(&h, bytes.data() + i, 2);
    out.push_back(dtype == F16 ? RefHalfToFloat(h) : RefBf16ToFloat(h));
  }
  return out;
}

cg::OpDesc RotaryOp(const RotaryCase& c, int32_t dtype) {
  auto op = Op("RotaryEmbedding", 1, {T(dtype, c.source), T(dtype, c.table), T(dtype, c.table)},
               {T(dtype, c.out.empty() ? c.shape : c.out)},
               {AttrInts("x_shape", c.shape), AttrInts("x_strides", c.strides),
                AttrInt("x_offset", c.offset), AttrInt("x_head_group", c.head_group)});
  if (c.rotary > 0) op.attributes.push_back(AttrInt("rotary_dim", c.rotary));
  op.constants.resize(3);
  return op;
}

// The largest error relative to the storage type's rounding of the float64 result: 0 to 1 means
// within one rounding (plus fp32 arithmetic) of the exact value.
double RunRotary(const RotaryCase& c, int32_t dtype, const std::string& name) {
  const auto& sh = c.shape;
  const int64_t d = sh[3], r = c.rotary > 0 ? c.rotary : d, half = r / 2;
  std::string xb, cb, sb;
  const auto x = Stored(RandomFloats(1, Count(c.source)), dtype, &xb);
  const auto cs = Stored(RandomFloats(2, Count(c.table)), dtype, &cb);
  const auto sn = Stored(RandomFloats(3, Count(c.table)), dtype, &sb);
  const auto got = Loaded(RunKernel(RotaryOp(c, dtype), name, {xb, cb, sb})[0], dtype);
  REQUIRE(static_cast<int64_t>(got.size()) == Count(sh));
  // The table's index for (b, h, s, k): its dims right-aligned against [B, H, S, r].
  const std::vector<int64_t> full = {sh[0], sh[1], sh[2], r};
  auto table_at = [&](const std::array<int64_t, 4>& i) {
    int64_t at = 0;
    const size_t pad = 4 - c.table.size();
    for (size_t a = pad; a < 4; ++a) {
      const int64_t n = c.table[a - pad];
      at = at * n + (n == 1 ? 0 : i[a]);
    }
    return at;
  };
  const double rel = dtype == F ? 0 : dtype == F16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8);
  double worst = 0;
  int64_t flat = 0;
  for (int64_t b = 0; b < sh[0]; ++b)
    for (int64_t h = 0; h < sh[1]; ++h)
      for (int64_t s = 0; s < sh[2]; ++s)
        for (int64_t k = 0; k < d; ++k, ++flat) {
          auto xs = [&](int64_t col) {
            return x[c.offset + b * c.strides[0] + (h / c.head_group) * c.strides[1] +
                     s * c.strides[2] + col * c.strides[3]];
          };
          double want = xs(k);
          if (k < r) {
            // A table of r / 2 columns holds one angle per rotated pair (both halves read it).
            const int64_t col = c.table.back() == r || k < half ? k : k - half;
            const int64_t t = table_at({b, h, s, col});
            want = k < half ? xs(k) * cs[t] - xs(k + half) * sn[t]
                            : xs(k) * cs[t] + xs(k - half) * sn[t];
          }
          // fp32 arithmetic (a few ulps of the operands' magnitude), then one rounding.
          const double bound = rel * std::fabs(want) + 4e-7;
          worst = std::max(worst, std::fabs(got[flat] - want) / bound);
        }
  return worst;
}

std::string Suffix(int32_t dtype) {
  return dtype == F ? "_f32" : dtype == F16 ? "_f16" : "_bf16";
}

}  // namespace

TEST_CASE("RotaryEmbedding reads Q and K as head slices of a packed QKV projection",
          "[cuda][rotary]") {
  // [B, S, (Hq + 2 Hkv) * D]: Llama's merged projection, split into Q, K, V and viewed as heads.
  const int64_t b = 2, s = 5, hq = 4, hkv = 2, d = 8, width = (hq + 2 * hkv) * d;
  for (int32_t dtype : {F, F16, BF16}) {
    RotaryCase q;
    q.source = {b, s, width};
    q.shape = {b, hq, s, d};
    q.strides = {s * width, d, width, 1};
    q.table = {s, d};
    CHECK(RunRotary(q, dtype, "rope_q" + Suffix(dtype)) <= 1.0);
    RotaryCase k = q;
    k.shape = {b, hkv, s, d};
    k.offset = hq * d;
    k.table = {1, 1, s, d};
    CHECK(RunRotary(k, dtype, "rope_k" + Suffix(dtype)) <= 1.0);
  }
}

TEST_CASE("RotaryEmbedding takes per-batch tables, repeated heads and partial rotary",
          "[cuda][rotary]") {
  for (int32_t dtype : {F, F16, BF16}) {
    // A contiguous [B, H, S, D] x with per-batch positions ([B, 1, S, D] tables), rows longer
    // than a block so the grid-stride loop wraps.
    RotaryCase plain;
    plain.source = {3, 2, 40, 64};
    plain.shape = {3, 2, 40, 64};
    plain.strides = {2 * 40 * 64, 40 * 64, 64, 1};
    plain.table = {3, 1, 40, 64};
    CHECK(RunRotary(plain, dtype, "rope_batch" + Suffix(dtype)) <= 1.0);
    // Heads read twice each (head_group 2) from a [S, H, D] source, written as rank 3.
    RotaryCase grouped;
    grouped.source = {6, 2, 16};
    grouped.shape = {1, 4, 6, 16};
    grouped.strides = {0, 16, 32, 1};
    grouped.head_group = 2;
    grouped.table = {6, 16};
    grouped.out = {4, 6, 16};
    CHECK(RunRotary(grouped, dtype, "rope_group" + Suffix(dtype)) <= 1.0);
    // GPT-NeoX / Phi: the first 8 of 20 columns rotate, the rest pass through.
    RotaryCase partial = plain;
    partial.source = {2, 3, 7, 20};
    partial.shape = {2, 3, 7, 20};
    partial.strides = {3 * 7 * 20, 7 * 20, 20, 1};
    partial.rotary = 8;
    partial.table = {1, 1, 7, 8};
    CHECK(RunRotary(partial, dtype, "rope_partial" + Suffix(dtype)) <= 1.0);
  }
}

TEST_CASE("RotaryEmbedding reads half-width tables, one angle per rotated pair", "[cuda][rotary]") {
  // ONNX Runtime's cos_cache/sin_cache rows as GroupQueryAttention gathers them: [1, 1, S, D / 2]
  // for every head, and partial rotary with [S, R / 2] tables.
  for (int32_t dtype : {F, F16, BF16}) {
    RotaryCase whole;
    whole.source = {1, 3, 5, 16};
    whole.shape = {1, 3, 5, 16};
    whole.strides = {3 * 5 * 16, 5 * 16, 16, 1};
    whole.table = {1, 1, 5, 8};
    CHECK(RunRotary(whole, dtype, "rope_half" + Suffix(dtype)) <= 1.0);
    RotaryCase partial = whole;
    partial.rotary = 8;
    partial.table = {5, 4};
    CHECK(RunRotary(partial, dtype, "rope_half_partial" + Suffix(dtype)) <= 1.0);
  }
}

TEST_CASE("RotaryEmbedding refusals name their reason", "[cuda][rotary]") {
  RotaryCase c;
  c.source = {1, 4, 8, 16};
  c.shape = {1, 4, 8, 16};
  c.strides = {512, 128, 16, 1};
  c.table = {8, 16};
  CHECK(cg::Unsupported(RotaryOp(c, F)).empty());
  // ONNX's own RotaryEmbedding (opset 23: x, cos_cache, sin_cache, position_ids) is another op.
  auto onnx_form = Op("RotaryEmbedding", 23, {T(F, {1, 4, 8, 16}), T(F, {8, 8}), T(F, {8, 8})},
                      {T(F, {1, 4, 8, 16})});
  CHECK_THAT(cg::Unsupported(onnx_form), Catch::Contains("fused form"));
  auto outside = c;
  outside.offset = 1;
  CHECK_THAT(cg::Unsupported(RotaryOp(outside, F)), Catch::Contains("outside"));
  auto odd = c;
  odd.rotary = 5;
  CHECK_THAT(cg::Unsupported(RotaryOp(odd, F)), Catch::Contains("rotary_dim"));
  auto table = c;
  table.table = {8, 4};  // a quarter of the head: neither a column nor a pair per entry
  CHECK_THAT(cg::Unsupported(RotaryOp(table, F)), Catch::Contains("cos and sin"));
  auto half_sin = c;
  half_sin.table = {8, 8};
  auto mixed = RotaryOp(half_sin, F);
  mixed.inputs[2] = T(F, {8, 16});  // cos of half width with sin of full width
  CHECK_THAT(cg::Unsupported(mixed), Catch::Contains("cos and sin"));
  auto shape = c;
  shape.out = {1, 4, 8, 8};
  CHECK_THAT(cg::Unsupported(RotaryOp(shape, F)), Catch::Contains("shape"));
}

}  // namespace ortc::test::cuda
