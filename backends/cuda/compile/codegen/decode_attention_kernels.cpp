// The decode form of FusedAttention: a few query rows (a generation step's new tokens) against
// many keys (the cache). The tiled kernel (attention_kernels.cpp) gives each block 32 or 64
// query rows and each row at most 4 threads, so with one row a head runs on 4 threads; here a
// block of kThreads threads serves one query row of one head and a run of its keys:
//   1. the row of q goes to shared memory; thread t scores keys t, t + T, ... of the run
//      (scale, additive mask, Where fill), keeping every score in shared memory;
//   2. the block's maximum, then exp(score - max) and their sum, by tree reductions in shared
//      memory (no warp intrinsic: the host shim runs the same text);
//   3. the output: thread t accumulates column t % dv over keys t / dv, t / dv + P, ...
//      (P = T / dv groups, so neighbouring threads read neighbouring columns of a V row), the
//      groups' sums added in a fixed order.
// FusedAttention runs all keys in one block and writes the normalised row. Split over the keys
// (flash-decoding), DecodeAttentionPartial runs `key_splits` blocks per row, each over a run of
// `key_chunk` keys, and writes its run's (max, sum of exp, unnormalised output) in fp32; then
// DecodeAttentionMerge rescales the runs to the largest max and normalises (one block per row).
// Splitting lets a step whose batch x heads x rows blocks would leave most SMs idle read its
// cache on all of them, and takes contexts past kDecodeMaxKeys (one block's scores must fit in
// shared memory). Rows whose every score is -inf give zeros, as the tiled kernel and the GEMM
// form do (a run with no live key has max -inf and weighs nothing in the merge). GQA's repeated
// key/value heads are read in place (h / head_group); the blocks of one group read the same
// rows of K and V, which the cache serves.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "cuda/compile/codegen/attention_shapes.h"
#include "cuda/compile/codegen/kernel_text.h"

namespace ortc::backends::cuda::codegen {

bool DecodeAttentionFits(int64_t rows, int64_t keys) {
  return rows >= 1 && rows <= kDecodeMaxRows && keys >= 1 && keys <= kDecodeMaxKeys;
}

int64_t DecodeKeySplits(int64_t blocks, int64_t keys) {
  // Enough blocks to cover an H100's 132 SMs twice (as the tiled kernel's ChooseSplit aims),
  // but no run shorter than kDecodeMinChunk keys: below that a block's fixed costs (loading q,
  // three reductions) and the merge outweigh the keys it reads.
  constexpr int64_t kTargetBlocks = 2 * 132;
  if (blocks < 1 || keys < 1) return 1;
  const int64_t wanted = (kTargetBlocks + blocks - 1) / blocks;
  const int64_t most = std::max<int64_t>(1, keys / kDecodeMinChunk);
  int64_t splits = std::min(wanted, most);
  splits = std::max(splits, (keys + kDecodeMaxKeys - 1) / kDecodeMaxKeys);
  // Equal runs, none empty: the chunk rounded up, then as many splits as that chunk needs.
  const int64_t chunk = (keys + splits - 1) / splits;
  return (keys + chunk - 1) / chunk;
}

namespace attention {
namespace {

constexpr int64_t kThreads = 128;

// Kernel text reducing red[0..T) into red[0] with `combine(a, b)` (a C expression of `a` and
// `b`), every thread taking part; ends synchronised.
std::string TreeReduce(const std::string& combine) {
  std::ostringstream c;
  c << "  for (int w = " << kThreads / 2 << "; w > 0; w >>= 1) {\n"
    << "    if (t < w) {\n"
    << "      const float a = red[t], b = red[t + w];\n"
    << "      red[t] = " << combine << ";\n"
    << "    }\n"
    << "    __syncthreads();\n"
    << "  }\n";
  return c.str();
}

// Kernel text putting the block's row of q into qs[]: as stored, or rotated as RotaryEmbedding
// computes it (rotary_kernels.cpp), in fp32: with h = rotary_dim / 2 and t(d) the table column,
//   q'[d] = q[d] * cos[t(d)] - q[d + h] * sin[t(d)]   for d < h
//   q'[d] = q[d] * cos[t(d)] + q[d - h] * sin[t(d)]   for h <= d < rotary_dim
//   q'[d] = q[d]                                       past rotary_dim.
template <typename Load>
std::string QueryLoad(const OpDesc& op, const Shapes& s, const Load& load) {
  std::ostringstream c;
  c << "  for (int d = t; d < " << s.head_dim << "; d += " << kThreads << ")";
  if (s.q_rotary_dim == 0) {
    c << "\n    qs[d] = " << load(kQ, Index("qbase", s.q, "row", "d")) << ";\n";
    return c.str();
  }
  const int64_t half = s.q_rotary_dim / 2;
  const std::string h = IntLiteral(half);
  const std::string col =
      s.table_width == s.q_rotary_dim ? "d" : "(d < " + h + " ? d : d - " + h + ")";
  c << " {\n"
    << "    float x = " << load(kQ, Index("qbase", s.q, "row", "d")) << ";\n"
    << "    if (d < " << s.q_rotary_dim << ") {\n"
    << "      const float other = d < " << h << " ? -"
    << load(kQ, Index("qbase", s.q, "row", "d + " + h)) << " : "
    << load(kQ, Index("qbase", s.q, "row", "d - " + h)) << ";\n"
    << "      const ortc_i64 tc = " << col << ";\n"
    << "      x = x * " << load(kQCos, Index("cosbase", s.q_cos, "row", "tc")) << " + other * "
    << load(kQSin, Index("sinbase", s.q_sin, "row", "tc")) << ";\n"
    << "    }\n"
    << "    qs[d] = x;\n"
    << "  }\n";
  return c.str();
}

}  // namespace

Result<KernelSource> EmitDecodeAttention(const std::string& name, const OpDesc& op,
                                         const Shapes& s) {
  // One block per row of FusedAttention, or per run of keys of DecodeAttentionPartial.
  const bool partial = op.op_type == kDecodePartialOp;
  const int64_t run_keys = partial ? s.key_chunk : s.keys;
  if (!DecodeAttentionFits(s.rows, run_keys) || s.value_dim > kThreads)
    return InvalidArgument("FusedAttention: the decode kernel takes at most " +
                           std::to_string(kDecodeMaxRows) + " rows and " +
                           std::to_string(kDecodeMaxKeys) + " keys a block");
  const int64_t D = s.head_dim, DV = s.value_dim, P = kThreads / DV;
  const float scale = FloatAttr(op, "scale", 1.0f);
  const int32_t ot = partial ? static_cast<int32_t>(onnx::TensorProto::FLOAT) : op.outputs[0].dtype;
  // The block's keys: all of them, or its run [lo, lo + n) with j counting from lo.
  const std::string keys = partial ? "n" : IntLiteral(s.keys), minus_inf = FloatLiteral(-INFINITY);
  const std::string key = partial ? "lo + j" : "j";
  auto load = [&](size_t i, const std::string& index) {
    return LoadExpr(op.inputs[i].dtype, "in" + std::to_string(i) + "[" + index + "]");
  };
  // q, k, v, mask, cond, and the rotary query's cos and sin when it has them.
  const int inputs = static_cast<int>(op.inputs.size());
  std::ostringstream c;
  c << "extern \"C\" __global__ void " << name << "(" << KernelParams(inputs, 1) << ") {\n";
  for (int i = 0; i < inputs; ++i) {
    if (!Present(op, i)) continue;
    const std::string t = StorageCType(op.inputs[i].dtype);
    c << "  const " << t << "* __restrict__ in" << i << " = (const " << t << "*)p" << i << ";\n";
  }
  c << "  " << StorageCType(ot) << "* __restrict__ out0 = (" << StorageCType(ot) << "*)p" << inputs
    << ";\n"
    << "  __shared__ float qs[" << D << "];\n"
    << "  __shared__ float score[" << run_keys << "];\n"
    << "  __shared__ float red[" << kThreads << "];\n";
  if (partial) {
    c << "  const ortc_i64 b = blockIdx.z, h = blockIdx.y, row = blockIdx.x / " << s.key_splits
      << ", run = blockIdx.x % " << s.key_splits << ";\n"
      << "  const ortc_i64 lo = run * " << s.key_chunk << ";\n"
      << "  const ortc_i64 n = " << s.keys << " - lo < " << s.key_chunk << " ? " << s.keys
      << " - lo : " << s.key_chunk << ";\n";
  } else {
    c << "  const ortc_i64 b = blockIdx.z, h = blockIdx.y, row = blockIdx.x;\n";
  }
  c << "  const int t = threadIdx.x;\n"
    << "  const ortc_i64 qbase = " << BaseOf(s.q) << ", kbase = " << BaseOf(s.k)
    << ", vbase = " << BaseOf(s.v) << ";\n";
  if (Present(op, kMask)) c << "  const ortc_i64 mbase = " << BaseOf(s.mask) << ";\n";
  if (Present(op, kCond)) c << "  const ortc_i64 cbase = " << BaseOf(s.cond) << ";\n";
  if (s.q_rotary_dim > 0)
    c << "  const ortc_i64 cosbase = " << BaseOf(s.q_cos) << ", sinbase = " << BaseOf(s.q_sin)
      << ";\n";
  c << QueryLoad(op, s, load) << "  __syncthreads();\n"
    << "  float peak = " << minus_inf << ";\n"
    << "  for (ortc_i64 j = t; j < " << keys << "; j += " << kThreads << ") {\n"
    << "    float sc = 0.f;\n"
    << "    for (int d = 0; d < " << D << "; ++d) sc += qs[d] * "
    << load(kK, Index("kbase", s.k, key, "d")) << ";\n"
    << "    sc *= " << FloatLiteral(scale) << ";\n";
  c << MaskScore(op, s, "sc", "row", key, "    ");
  c << "    score[j] = sc;\n"
    << "    if (sc > peak) peak = sc;\n"
    << "  }\n"
    << "  red[t] = peak;\n"
    << "  __syncthreads();\n"
    << TreeReduce("a > b ? a : b") << "  const float top = red[0];\n"
    << "  __syncthreads();\n"
    << "  float total = 0.f;\n"
    << "  for (ortc_i64 j = t; j < " << keys << "; j += " << kThreads << ") {\n"
    << "    const float e = score[j] == " << minus_inf << " ? 0.f : expf(score[j] - top);\n"
    << "    score[j] = e;\n"
    << "    total += e;\n"
    << "  }\n"
    << "  red[t] = total;\n"
    << "  __syncthreads();\n"
    << TreeReduce("a + b") << "  const float sum = red[0];\n";
  if (!partial) c << "  const float inv = sum > 0.f ? 1.f / sum : 0.f;\n";
  c << "  __syncthreads();\n"
    << "  const int col = t % " << DV << ", part = t / " << DV << ";\n"
    << "  float acc = 0.f;\n"
    << "  if (part < " << P << ")\n"
    << "    for (ortc_i64 j = part; j < " << keys << "; j += " << P << ")\n"
    << "      acc += score[j] * " << load(kV, Index("vbase", s.v, key, "col")) << ";\n"
    << "  red[t] = acc;\n"
    << "  __syncthreads();\n"
    << "  if (t >= " << DV << ") return;\n"
    << "  for (int g = 1; g < " << P << "; ++g) acc += red[g * " << DV << " + t];\n";
  if (partial) {
    // The run's record: [max, sum, dv unnormalised output columns], runs of a row adjacent.
    c << "  const ortc_i64 obase = (((b * " << s.q.dims[1] << " + h) * " << s.rows << " + row) * "
      << s.key_splits << " + run) * " << DV + 2 << ";\n"
      << "  if (t == 0) {\n"
      << "    out0[obase] = top;\n"
      << "    out0[obase + 1] = sum;\n"
      << "  }\n"
      << "  out0[obase + 2 + t] = acc;\n";
  } else {
    c << "  const ortc_i64 obase = " << BaseOf(s.out) << ";\n"
      << "  out0[" << Index("obase", s.out, "row", "col") << "] = " << StoreExpr(ot, "acc * inv")
      << ";\n";
  }
  c << "}\n";
  KernelSource k;
  k.name = name;
  k.source = c.str();
  k.num_inputs = inputs;
  k.num_outputs = 1;
  k.grid = {static_cast<uint32_t>(s.rows * (partial ? s.key_splits : 1)),
            static_cast<uint32_t>(s.q.dims[1]), static_cast<uint32_t>(s.q.dims[0])};
  k.block = {static_cast<uint32_t>(kThreads), 1, 1};
  k.uses_block_sync = true;
  return k;
}

Result<KernelSource> EmitDecodeAttentionMerge(const std::string& name, const OpDesc& op,
                                              const Shapes& s) {
  const int64_t DV = s.value_dim, W = DV + 2, S = s.key_splits;
  const int32_t ot = op.outputs[0].dtype;
  const std::string minus_inf = FloatLiteral(-INFINITY);
  std::ostringstream c;
  c << "extern \"C\" __global__ void " << name << "(" << KernelParams(1, 1) << ") {\n"
    << "  const float* __restrict__ in0 = (const float*)p0;\n"
    << "  " << StorageCType(ot) << "* __restrict__ out0 = (" << StorageCType(ot) << "*)p1;\n"
    << "  const ortc_i64 b = blockIdx.z, h = blockIdx.y, row = blockIdx.x;\n"
    << "  const int t = threadIdx.x;\n"
    << "  if (t >= " << DV << ") return;\n"
    << "  const float* runs = in0 + ((b * " << s.q.dims[1] << " + h) * " << s.rows << " + row) * "
    << S * W << ";\n"
    << "  float top = " << minus_inf << ";\n"
    << "  for (int r = 0; r < " << S << "; ++r)\n"
    << "    if (runs[r * " << W << "] > top) top = runs[r * " << W << "];\n"
    << "  float sum = 0.f, acc = 0.f;\n"
    << "  if (top != " << minus_inf << ")\n"
    << "    for (int r = 0; r < " << S << "; ++r) {\n"
    << "      const float m = runs[r * " << W << "];\n"
    << "      if (m == " << minus_inf << ") continue;\n"
    << "      const float w = expf(m - top);\n"
    << "      sum += w * runs[r * " << W << " + 1];\n"
    << "      acc += w * runs[r * " << W << " + 2 + t];\n"
    << "    }\n"
    << "  const float inv = sum > 0.f ? 1.f / sum : 0.f;\n"
    << "  const ortc_i64 obase = " << BaseOf(s.out) << ";\n"
    << "  out0[" << Index("obase", s.out, "row", "t") << "] = " << StoreExpr(ot, "acc * inv")
    << ";\n"
    << "}\n";
  KernelSource k;
  k.name = name;
  k.source = c.str();
  k.num_inputs = 1;
  k.num_outputs = 1;
  k.grid = {static_cast<uint32_t>(s.rows), static_cast<uint32_t>(s.q.dims[1]),
            static_cast<uint32_t>(s.q.dims[0])};
  k.block = {static_cast<uint32_t>((DV + 31) / 32 * 32), 1, 1};
  return k;
}

}  // namespace attention
}  // namespace ortc::backends::cuda::codegen
