// FusedAttention kernels through the host shim against a direct float64 reference (scores
// matrix, softmax, weighted sum): tails of the key tiles, keys split across threads and merged,
// head transposes read and written through permutations, additive and Where masks, fully masked
// rows, and the refusals; and the decode kernel (at most cg::kDecodeMaxRows query rows) on the
// same cases, with keys wrapping its threads, every head size's column groups and repeated
// key/value heads; and the decode kernel split over the keys and merged (flash-decoding): uneven
// runs, whole runs masked, a cache longer than one block holds.
#include <array>
#include <cmath>
#include <functional>
#include <random>

#include "data_movement_test_util.h"
#include "test_data.h"

namespace ortc::test::cuda {
namespace {

constexpr int32_t BOOL = TensorProto::BOOL;

// Element of a logical [b, h, s, d] tensor stored as `stored_dims` and read through `perm`
// (logical axis a = stored axis perm[a]).
size_t Offset(const std::vector<int64_t>& stored, const std::vector<int64_t>& perm,
              std::array<int64_t, 4> at) {
  std::vector<int64_t> coord(4);
  for (int a = 0; a < 4; ++a) coord[perm[a]] = at[a];
  size_t off = 0;
  for (int i = 0; i < 4; ++i) off = off * stored[i] + coord[i];
  return off;
}

struct Case {
  int64_t b = 1, h = 1, s = 1, keys = 1, d = 1;
  float scale = 1.f;
  std::vector<int64_t> qkv_stored_perm = {0, 1, 2, 3};  // how q/k/v are stored
  std::vector<int64_t> out_perm = {0, 1, 2, 3};
  std::vector<int64_t> mask_dims;  // additive mask (empty: none)
  std::vector<float> mask;
  std::vector<int64_t> cond_dims;  // Where condition (empty: none)
  std::vector<uint8_t> cond;
  bool keep_if_true = true;
  float fill = 0.f;
  bool mask_after_where = false;  // Where(cond, s, fill) + mask, as eager GPT-2 writes it
  // > 0: the decode kernel split over the keys into this many runs (DecodeAttentionPartial),
  // then merged (DecodeAttentionMerge), instead of FusedAttention's one kernel.
  int64_t key_splits = 0;
  // > 0: q is rotated by the decode kernel as it loads it (q_rotary_dim), with random cos and
  // sin tables of [rows, width] (width = rotary_dim, or half of it with half_tables).
  int64_t q_rotary_dim = 0;
  bool half_tables = false;
};

std::vector<int64_t> Stored(const std::vector<int64_t>& logical, const std::vector<int64_t>& p) {
  std::vector<int64_t> s(4);
  for (int a = 0; a < 4; ++a) s[p[a]] = logical[a];
  return s;
}

double Broadcast(const std::vector<int64_t>& dims, std::array<int64_t, 4> at,
                 const std::function<double(size_t)>& get) {
  size_t off = 0;
  const size_t pad = 4 - dims.size();
  for (size_t i = 0; i < dims.size(); ++i) off = off * dims[i] + (dims[i] == 1 ? 0 : at[pad + i]);
  return get(off);
}

// Runs the kernel and the float64 reference; returns the largest difference.
double RunCase(const Case& c, const std::string& name) {
  const std::vector<int64_t> q_log = {c.b, c.h, c.s, c.d}, k_log = {c.b, c.h, c.keys, c.d};
  const auto q_st = Stored(q_log, c.qkv_stored_perm), k_st = Stored(k_log, c.qkv_stored_perm);
  const std::vector<int64_t> o_log = {c.b, c.h, c.s, c.d};
  std::vector<int64_t> o_st(4);  // Transpose(logical, out_perm)
  for (int a = 0; a < 4; ++a) o_st[a] = o_log[c.out_perm[a]];
  const auto q = RandomFloats(1, c.b * c.h * c.s * c.d),
             k = RandomFloats(2, c.b * c.h * c.keys * c.d),
             v = RandomFloats(3, c.b * c.h * c.keys * c.d);
  const int64_t width = c.half_tables ? c.q_rotary_dim / 2 : c.q_rotary_dim;
  const auto cos_table = RandomFloats(4, c.s * width), sin_table = RandomFloats(5, c.s * width);
  // Element (b, h, r, e) of q as the attention reads it: rotated on the first q_rotary_dim
  // columns (q * cos + rotate_half(q) * sin, RotaryEmbedding's rule), in float64.
  auto q_at = [&](int64_t bi, int64_t hi, int64_t r, int64_t e) {
    auto raw = [&](int64_t col) {
      return double(q[Offset(q_st, c.qkv_stored_perm, {bi, hi, r, col})]);
    };
    if (e >= c.q_rotary_dim) return raw(e);
    const int64_t half = c.q_rotary_dim / 2, t = c.half_tables ? e % half : e;
    const double other = e < half ? -raw(e + half) : raw(e - half);
    return raw(e) * cos_table[r * width + t] + other * sin_table[r * width + t];
  };
  auto op = Op("FusedAttention", 1,
               {T(F, q_st), T(F, k_st), T(F, k_st),
                c.mask_dims.empty() ? cg::TensorDesc{} : T(F, c.mask_dims),
                c.cond_dims.empty() ? cg::TensorDesc{} : T(BOOL, c.cond_dims)},
               {T(F, o_st)},
               {AttrFloat("scale", c.scale), AttrFloat("fill", c.fill),
                AttrInt("keep_if_true", c.keep_if_true), AttrInts("q_perm", c.qkv_stored_perm),
                AttrInts("k_perm", c.qkv_stored_perm), AttrInts("v_perm", c.qkv_stored_perm),
                AttrInts("out_perm", c.out_perm), AttrInt("mask_after_where", c.mask_after_where)});
  std::string cond_bytes(c.cond.begin(), c.cond.end());
  std::vector<std::string> inputs = {Floats(q), Floats(k), Floats(v),
                                     c.mask.empty() ? std::string() : Floats(c.mask), cond_bytes};
  if (c.q_rotary_dim > 0) {
    op.inputs.push_back(T(F, {c.s, width}));
    op.inputs.push_back(T(F, {c.s, width}));
    op.attributes.push_back(AttrInt("q_rotary_dim", c.q_rotary_dim));
    inputs.push_back(Floats(cos_table));
    inputs.push_back(Floats(sin_table));
  }
  op.constants.resize(op.inputs.size());
  std::vector<std::string> outs;
  if (c.key_splits == 0) {
    outs = RunKernel(op, name, inputs);
  } else {
    // The two kernels lowering_decode_split.cpp makes of a decode attention.
    const std::vector<int64_t> runs_dims = {c.b, c.h, c.s, c.key_splits, c.d + 2};
    auto partial = op;
    partial.op_type = "DecodeAttentionPartial";
    partial.outputs = {T(F, runs_dims)};
    partial.attributes.push_back(AttrInt("key_splits", c.key_splits));
    const auto runs = RunKernel(partial, name + "_runs", inputs);
    auto merge = Op("DecodeAttentionMerge", 1, {T(F, runs_dims)}, {T(F, o_st)},
                    {AttrInts("out_perm", c.out_perm), AttrInt("key_splits", c.key_splits)});
    merge.constants.resize(1);
    outs = RunKernel(merge, name + "_merge", runs);
  }
  const auto got = AsFloats(outs[0]);
  // Inverse of out_perm: logical axis b is stored at axis a with out_perm[a] = b.
  std::vector<int64_t> out_read(4);
  for (int a = 0; a < 4; ++a) out_read[c.out_perm[a]] = a;
  double worst = 0;
  for (int64_t bi = 0; bi < c.b; ++bi)
    for (int64_t hi = 0; hi < c.h; ++hi)
      for (int64_t r = 0; r < c.s; ++r) {
        std::vector<double> score(c.keys);
        double peak = -INFINITY;
        for (int64_t j = 0; j < c.keys; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < c.d; ++e)
            dot += q_at(bi, hi, r, e) * k[Offset(k_st, c.qkv_stored_perm, {bi, hi, j, e})];
          double sc = dot * c.scale;
          // fp32 like the kernels: lowest + lowest overflows to -inf in both.
          auto add_mask = [&] {
            if (!c.mask.empty())
              sc = static_cast<float>(
                  static_cast<float>(sc) +
                  Broadcast(c.mask_dims, {bi, hi, r, j}, [&](size_t i) { return c.mask[i]; }));
          };
          if (!c.mask_after_where) add_mask();
          if (!c.cond.empty() && (Broadcast(c.cond_dims, {bi, hi, r, j}, [&](size_t i) {
                                    return c.cond[i];
                                  }) != 0) != c.keep_if_true)
            sc = c.fill;
          if (c.mask_after_where) add_mask();
          score[j] = sc;
          peak = std::max(peak, sc);
        }
        double total = 0;
        for (auto& sc : score) total += sc == -INFINITY ? 0 : std::exp(sc - peak);
        for (int64_t e = 0; e < c.d; ++e) {
          double want = 0;
          for (int64_t j = 0; j < c.keys; ++j) {
            if (score[j] == -INFINITY) continue;
            want += std::exp(score[j] - peak) / total *
                    v[Offset(k_st, c.qkv_stored_perm, {bi, hi, j, e})];
          }
          if (total == 0) want = 0;  // every key masked: the kernel writes zeros
          const double g = got[Offset(o_st, out_read, {bi, hi, r, e})];
          worst = std::max(worst, std::isnan(g) ? INFINITY : std::fabs(g - want));
        }
      }
  return worst;
}

TEST_CASE("FusedAttention matches softmax(QK^T * scale) V over partial key tiles",
          "[cuda][attention]") {
  Case c;
  c.b = 2, c.h = 3, c.s = 37, c.keys = 45, c.d = 16, c.scale = 0.25f;
  CHECK(RunCase(c, "attn_plain") < 2e-6);
}

TEST_CASE("FusedAttention reads split heads and writes merged heads through permutations",
          "[cuda][attention]") {
  // q, k, v stored [b, s, h, d] (the Reshape before the head Transpose); the output stored
  // [b, s, h, d] (the Transpose before the head merge); a [b, 1, 1, keys] padding mask.
  Case c;
  c.b = 2, c.h = 4, c.s = 33, c.keys = 33, c.d = 8, c.scale = 1 / std::sqrt(8.f);
  c.qkv_stored_perm = {0, 2, 1, 3};
  c.out_perm = {0, 2, 1, 3};
  c.mask_dims = {2, 1, 1, 33};
  c.mask.assign(66, 0.f);
  for (int j = 20; j < 33; ++j) c.mask[j] = -3.4e38f;      // batch 0: 13 padded keys
  for (int j = 0; j < 33; j += 3) c.mask[33 + j] = -1e4f;  // batch 1: holes
  CHECK(RunCase(c, "attn_permuted_padding") < 2e-6);
}

TEST_CASE("FusedAttention applies a Where causal mask either way round", "[cuda][attention]") {
  Case c;
  c.b = 1, c.h = 2, c.s = 40, c.keys = 40, c.d = 32, c.scale = 0.125f;
  c.cond_dims = {1, 1, 40, 40};
  for (int r = 0; r < 40; ++r)
    for (int j = 0; j < 40; ++j) c.cond.push_back(j <= r);
  c.fill = -3.4028234663852886e38f;
  CHECK(RunCase(c, "attn_causal_keep") < 2e-6);
  for (auto& x : c.cond) x = !x;  // Where(upper, fill, scores)
  c.keep_if_true = false;
  CHECK(RunCase(c, "attn_causal_inverted") < 2e-6);
}

TEST_CASE("FusedAttention writes zeros for a row whose every key is -inf", "[cuda][attention]") {
  Case c;
  c.b = 1, c.h = 1, c.s = 3, c.keys = 5, c.d = 4;
  c.mask_dims = {3, 5};
  c.mask.assign(15, 0.f);
  for (int j = 0; j < 5; ++j) c.mask[5 + j] = -INFINITY;  // row 1 fully masked
  CHECK(RunCase(c, "attn_masked_row") < 2e-6);            // 3 rows: the decode kernel
  // 5 rows (the tiled kernel), 40 keys: split four ways and merged; row 1's splits all empty,
  // row 2 has one live key.
  c.s = 5, c.keys = 40;
  c.mask_dims = {5, 40};
  c.mask.assign(200, 0.f);
  for (int j = 0; j < 40; ++j) c.mask[40 + j] = c.mask[80 + j] = -INFINITY;
  c.mask[80 + 37] = 0.f;
  CHECK(RunCase(c, "attn_masked_row_split") < 2e-6);
}

TEST_CASE("FusedAttention of a few query rows runs the decode kernel", "[cuda][attention]") {
  CHECK(cg::DecodeAttentionFits(1, 300));
  CHECK(cg::DecodeAttentionFits(cg::kDecodeMaxRows, cg::kDecodeMaxKeys));
  CHECK_FALSE(cg::DecodeAttentionFits(cg::kDecodeMaxRows + 1, 300));
  CHECK_FALSE(cg::DecodeAttentionFits(1, cg::kDecodeMaxKeys + 1));
  SECTION("one row against a cache longer than the block, head sizes 16, 64 and 128") {
    // 300 keys: each thread scores two or three; head size 16 sums 8 column groups, 128 one.
    for (int64_t d : {16, 64, 128}) {
      Case c;
      c.b = 2, c.h = 3, c.s = 1, c.keys = 300, c.d = d, c.scale = 1 / std::sqrt(float(d));
      CHECK(RunCase(c, "decode_plain_" + std::to_string(d)) < 2e-6);
    }
  }
  SECTION("a padded cache: the mask hides the rows past the sequence, one key left") {
    Case c;
    c.b = 2, c.h = 2, c.s = 1, c.keys = 64, c.d = 32, c.scale = 0.2f;
    c.qkv_stored_perm = {0, 2, 1, 3};  // [b, keys, h, d] as a Reshape before the heads
    c.out_perm = {0, 2, 1, 3};
    c.mask_dims = {2, 1, 1, 64};
    c.mask.assign(128, 0.f);
    for (int j = 9; j < 64; ++j) c.mask[j] = -3.4e38f;        // batch 0: 9 valid positions
    for (int j = 1; j < 64; ++j) c.mask[64 + j] = -INFINITY;  // batch 1: one
    CHECK(RunCase(c, "decode_padded") < 2e-6);
  }
  SECTION("four rows (speculative steps), a causal Where, one row fully masked") {
    Case c;
    c.b = 1, c.h = 2, c.s = 4, c.keys = 130, c.d = 8, c.scale = 0.5f;
    c.cond_dims = {1, 1, 4, 130};
    for (int r = 0; r < 4; ++r)
      for (int j = 0; j < 130; ++j) c.cond.push_back(r != 2 && j <= 126 + r);
    c.fill = -INFINITY;
    CHECK(RunCase(c, "decode_causal") < 2e-6);
  }
}

TEST_CASE("the decode kernel split over the keys matches the reference", "[cuda][attention]") {
  SECTION("how many runs: the GPU filled, runs of at least kDecodeMinChunk keys, within a block") {
    CHECK(cg::DecodeKeySplits(1, 300) == 1);         // too few keys for two runs
    CHECK(cg::DecodeKeySplits(2 * 132, 8000) == 1);  // the rows alone fill the GPU
    CHECK(cg::DecodeKeySplits(12, 4096) == 16);      // 12 heads, a 4096-key cache: 22 wanted
    CHECK(cg::DecodeKeySplits(1000, 20000) == 3);    // many blocks, but one block's keys bounded
    for (int64_t blocks : {1, 4, 12, 64, 300})
      for (int64_t keys : {1, 255, 256, 513, 1000, 8192, 8193, 50000, 131072}) {
        const int64_t n = cg::DecodeKeySplits(blocks, keys), chunk = (keys + n - 1) / n;
        INFO(blocks << " blocks, " << keys << " keys: " << n << " runs");
        CHECK(n >= 1);
        CHECK(chunk <= cg::kDecodeMaxKeys);
        CHECK((n - 1) * chunk < keys);  // no empty run
        if (n > 1) CHECK(chunk >= cg::kDecodeMinChunk);
      }
  }
  SECTION("runs of a cache, uneven last run, head sizes 16 and 128") {
    for (int64_t d : {16, 128}) {
      Case c;
      c.b = 2, c.h = 3, c.s = 1, c.keys = 301, c.d = d, c.scale = 1 / std::sqrt(float(d));
      c.key_splits = 3;  // runs of 101, 101 and 99 keys
      CHECK(RunCase(c, "decode_runs_" + std::to_string(d)) < 2e-6);
    }
  }
  SECTION("a cache longer than one block holds, stored [b, keys, h, d], written back so") {
    Case c;
    c.b = 1, c.h = 2, c.s = 1, c.keys = cg::kDecodeMaxKeys + 808, c.d = 8, c.scale = 0.3f;
    c.qkv_stored_perm = {0, 2, 1, 3};
    c.out_perm = {0, 2, 1, 3};
    c.key_splits = cg::DecodeKeySplits(c.b * c.h * c.s, c.keys);
    CHECK(c.key_splits > 1);
    CHECK(RunCase(c, "decode_long") < 2e-6);
  }
  SECTION("whole runs masked: a padded cache, one live key, and a row with none") {
    Case c;
    c.b = 2, c.h = 1, c.s = 2, c.keys = 1000, c.d = 16, c.scale = 0.25f;
    c.key_splits = 4;  // runs of 250 keys
    c.mask_dims = {2, 1, 2, 1000};
    c.mask.assign(4000, 0.f);
    for (int j = 300; j < 1000; ++j) c.mask[j] = -INFINITY;  // batch 0 row 0: runs 2, 3 empty
    for (int j = 0; j < 1000; ++j) c.mask[1000 + j] = j == 777 ? 0.f : -INFINITY;  // one key
    for (int j = 0; j < 1000; ++j) c.mask[2000 + j] = -INFINITY;  // batch 1 row 0: no key
    CHECK(RunCase(c, "decode_runs_masked") < 2e-6);
  }
  SECTION("four rows against the cache with a causal Where and the mask after it") {
    Case c;
    c.b = 1, c.h = 2, c.s = 4, c.keys = 600, c.d = 8, c.scale = 0.5f;
    c.key_splits = 2;
    c.cond_dims = {1, 1, 4, 600};
    for (int r = 0; r < 4; ++r)
      for (int j = 0; j < 600; ++j) c.cond.push_back(j <= 596 + r);
    c.fill = -3.4028234663852886e38f;
    c.mask_dims = {1, 1, 1, 600};
    c.mask.assign(600, 0.f);
    c.mask[0] = c.fill;
    c.mask_after_where = true;
    CHECK(RunCase(c, "decode_runs_causal") < 2e-6);
  }
  SECTION("refusals name their reason") {
    auto partial = Op("DecodeAttentionPartial", 1,
                      {T(F, {1, 2, 1, 16}), T(F, {1, 2, 40, 16}), T(F, {1, 2, 40, 16}), {}, {}},
                      {T(F, {1, 2, 1, 4, 18})}, {AttrInt("key_splits", 4)});
    CHECK(cg::Unsupported(partial).empty());
    auto wrong_runs = partial;
    wrong_runs.outputs = {T(F, {1, 2, 1, 4, 16})};
    CHECK_THAT(cg::Unsupported(wrong_runs), Catch::Contains("key_splits, dv + 2"));
    auto too_many = partial;
    too_many.attributes.back().set_i(41);
    CHECK_THAT(cg::Unsupported(too_many), Catch::Contains("key_splits must be in [1, keys]"));
    auto merge = Op("DecodeAttentionMerge", 1, {T(F, {1, 2, 1, 4, 18})}, {T(F, {1, 2, 1, 16})},
                    {AttrInt("key_splits", 4)});
    CHECK(cg::Unsupported(merge).empty());
    auto mismatched = merge;
    mismatched.outputs = {T(F, {1, 2, 1, 15})};
    CHECK_THAT(cg::Unsupported(mismatched), Catch::Contains("do not chain"));
  }
}

TEST_CASE("the decode kernel rotates a rotary query as it loads it", "[cuda][attention]") {
  SECTION("tables per column and per rotated pair, heads stored [b, s, h, d]") {
    for (bool half_tables : {false, true}) {
      Case c;
      c.b = 2, c.h = 3, c.s = 2, c.keys = 70, c.d = 16, c.scale = 0.25f;
      c.qkv_stored_perm = {0, 2, 1, 3};
      c.q_rotary_dim = 16;
      c.half_tables = half_tables;
      CHECK(RunCase(c, half_tables ? "decode_rotary_half" : "decode_rotary") < 2e-6);
    }
  }
  SECTION("partial rotary: the columns past q_rotary_dim pass through") {
    Case c;
    c.b = 1, c.h = 2, c.s = 1, c.keys = 40, c.d = 32, c.scale = 0.2f;
    c.q_rotary_dim = 8;
    CHECK(RunCase(c, "decode_rotary_partial") < 2e-6);
  }
  SECTION("split over the keys: every run rotates q alike") {
    Case c;
    c.b = 1, c.h = 2, c.s = 1, c.keys = 700, c.d = 16, c.scale = 0.25f;
    c.q_rotary_dim = 16;
    c.key_splits = 3;
    CHECK(RunCase(c, "decode_rotary_runs") < 2e-6);
  }
  SECTION("refusals name their reason") {
    // A rotary query of `rows` rows against 40 keys, tables of [rows, 16].
    auto rotary_op = [](int64_t rows) {
      return Op("FusedAttention", 1,
                {T(F, {1, 2, rows, 16}),
                 T(F, {1, 2, 40, 16}),
                 T(F, {1, 2, 40, 16}),
                 {},
                 {},
                 T(F, {rows, 16}),
                 T(F, {rows, 16})},
                {T(F, {1, 2, rows, 16})}, {AttrInt("q_rotary_dim", 16)});
    };
    auto op = rotary_op(1);
    CHECK(cg::Unsupported(op).empty());
    auto odd = op;
    odd.attributes.back().set_i(7);
    CHECK_THAT(cg::Unsupported(odd), Catch::Contains("q_rotary_dim must be even"));
    auto wide = op;
    wide.inputs[5] = T(F, {3, 16});  // 3 rows of tables for 1 row of q
    CHECK_THAT(cg::Unsupported(wide), Catch::Contains("rotary tables must be float and broadcast"));
    auto tiled = rotary_op(8);
    CHECK_THAT(cg::Unsupported(tiled), Catch::Contains("read by the decode kernel only"));
  }
}

TEST_CASE("FusedAttention adds the mask after the Where when the model does", "[cuda][attention]") {
  // Eager GPT-2: Where(causal, s / sqrt(d), lowest) + (1 - mask) * lowest. A masked position
  // of a padded key is lowest + lowest = -inf; a causal-masked key that is not padded keeps
  // lowest. Both kernels: the tiled one (6 rows) and the decode one (1 row).
  const float lowest = -3.4028234663852886e38f;
  for (int64_t rows : {6, 1}) {
    Case c;
    c.b = 1, c.h = 2, c.s = rows, c.keys = 6, c.d = 8, c.scale = 0.35f;
    c.cond_dims = {1, 1, rows, 6};
    for (int64_t r = 0; r < rows; ++r)
      for (int j = 0; j < 6; ++j) c.cond.push_back(j <= r + (6 - rows));
    c.fill = lowest;
    c.mask_dims = {1, 1, 1, 6};
    c.mask = {lowest, 0, 0, 0, 0, 0};  // key 0 is padding
    c.mask_after_where = true;
    CHECK(RunCase(c, "attn_mask_after_where_" + std::to_string(rows)) < 2e-6);
  }
}

TEST_CASE("the decode kernel reads repeated key/value heads in place", "[cuda][attention]") {
  // GQA: 4 query heads, 2 key/value heads ([b, 2, keys, d] caches, head h reading h / 2), the
  // same bits as the caches repeated to 4 heads.
  const int64_t b = 1, h = 4, kv = 2, keys = 200, d = 16;
  const auto q = RandomFloats(11, b * h * d), k = RandomFloats(12, b * kv * keys * d),
             v = RandomFloats(13, b * kv * keys * d);
  std::vector<float> k4, v4;
  for (int64_t hi = 0; hi < h; ++hi) {
    const auto at = static_cast<std::ptrdiff_t>((hi / 2) * keys * d);
    k4.insert(k4.end(), k.begin() + at, k.begin() + at + keys * d);
    v4.insert(v4.end(), v.begin() + at, v.begin() + at + keys * d);
  }
  std::vector<onnx::AttributeProto> grouped = {AttrFloat("scale", 0.25f)};
  for (const char* n : {"k", "v"}) {
    grouped.push_back(AttrInts(std::string(n) + "_shape", {b, h, keys, d}));
    grouped.push_back(AttrInts(std::string(n) + "_strides", {kv * keys * d, keys * d, d, 1}));
    grouped.push_back(AttrInt(std::string(n) + "_head_group", 2));
  }
  auto op = Op("FusedAttention", 1,
               {T(F, {b, h, 1, d}), T(F, {b, kv, keys, d}), T(F, {b, kv, keys, d}), {}, {}},
               {T(F, {b, h, 1, d})}, grouped);
  auto plain = Op("FusedAttention", 1,
                  {T(F, {b, h, 1, d}), T(F, {b, h, keys, d}), T(F, {b, h, keys, d}), {}, {}},
                  {T(F, {b, h, 1, d})}, {AttrFloat("scale", 0.25f)});
  op.constants.resize(5);
  plain.constants.resize(5);
  const auto got = RunKernel(op, "decode_gqa", {Floats(q), Floats(k), Floats(v), "", ""});
  const auto want =
      RunKernel(plain, "decode_repeated", {Floats(q), Floats(k4), Floats(v4), "", ""});
  CHECK(got[0] == want[0]);
}

TEST_CASE("FusedAttention reads q, k and v as strided views of one packed projection",
          "[cuda][attention]") {
  // x [b, s, 3 * h * d]: q, k, v side by side in each row (a fused QKV GEMM's output). The views
  // give the same bits as contiguous copies of the three slices.
  const int64_t b = 2, h = 3, s = 20, d = 8, n = h * d;
  const auto x = RandomFloats(7, b * s * 3 * n);
  std::vector<float> q(b * h * s * d), k(q.size()), v(q.size());
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t hi = 0; hi < h; ++hi)
      for (int64_t si = 0; si < s; ++si)
        for (int64_t di = 0; di < d; ++di) {
          const size_t at = ((bi * h + hi) * s + si) * d + di;
          const size_t row = (bi * s + si) * 3 * n + hi * d + di;
          q[at] = x[row], k[at] = x[row + n], v[at] = x[row + 2 * n];
        }
  const std::vector<int64_t> logical = {b, h, s, d};
  auto attrs = [&](bool packed) {
    std::vector<onnx::AttributeProto> a = {AttrFloat("scale", 0.3f)};
    for (int i = 0; i < 3 && packed; ++i) {
      const std::string name = std::string(1, "qkv"[i]);
      a.push_back(AttrInts(name + "_shape", logical));
      a.push_back(AttrInts(name + "_strides", {s * 3 * n, d, 3 * n, 1}));
      a.push_back(AttrInt(name + "_offset", i * n));
    }
    return a;
  };
  auto packed = Op("FusedAttention", 1,
                   {T(F, {b, s, 3 * n}), T(F, {b, s, 3 * n}), T(F, {b, s, 3 * n}), {}, {}},
                   {T(F, logical)}, attrs(true));
  auto plain = Op("FusedAttention", 1, {T(F, logical), T(F, logical), T(F, logical), {}, {}},
                  {T(F, logical)}, attrs(false));
  packed.constants.resize(5);
  plain.constants.resize(5);
  const auto got = RunKernel(packed, "attn_packed", {Floats(x), Floats(x), Floats(x), "", ""});
  const auto want = RunKernel(plain, "attn_unpacked", {Floats(q), Floats(k), Floats(v), "", ""});
  CHECK(got[0] == want[0]);
  // A view reaching past its input is refused.
  auto outside = packed;
  for (auto& a : outside.attributes)
    if (a.name() == "v_offset") a.set_i(2 * n + 1);
  CHECK_THAT(cg::Unsupported(outside), Catch::Contains("outside its input"));
}

TEST_CASE("FusedAttention refusals name their reason", "[cuda][attention]") {
  CHECK(cg::HasKernel("FusedAttention"));
  auto big = Op("FusedAttention", 1,
                {T(F, {1, 2, 8, 129}), T(F, {1, 2, 8, 129}), T(F, {1, 2, 8, 129}), {}, {}},
                {T(F, {1, 2, 8, 129})});
  CHECK_THAT(cg::Unsupported(big), Catch::Contains("head dims up to 128"));
  auto heads = Op("FusedAttention", 1,
                  {T(F, {1, 2, 8, 16}), T(F, {1, 3, 8, 16}), T(F, {1, 3, 8, 16}), {}, {}},
                  {T(F, {1, 2, 8, 16})});
  CHECK_THAT(cg::Unsupported(heads), Catch::Contains("batch and head dims"));
  auto mask =
      Op("FusedAttention", 1,
         {T(F, {1, 2, 8, 16}), T(F, {1, 2, 8, 16}), T(F, {1, 2, 8, 16}), T(F, {1, 3, 1, 8}), {}},
         {T(F, {1, 2, 8, 16})});
  CHECK_THAT(cg::Unsupported(mask), Catch::Contains("does not broadcast"));
}

}  // namespace
}  // namespace ortc::test::cuda
