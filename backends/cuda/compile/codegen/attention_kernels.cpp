// Fused scaled dot-product attention (FusedAttention, formed by lowering_attention.cpp): one
// kernel computes softmax(scale * Q K^T (+ mask | Where)) V with an online softmax over key
// tiles in shared memory, so the [S, S] score matrix never reaches memory.
#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <sstream>

#include "cuda/compile/codegen/attention_shapes.h"
#include "cuda/compile/codegen/emitters.h"
#include "cuda/compile/codegen/kernel_text.h"

namespace ortc::backends::cuda::codegen {
namespace attention {

bool Present(const OpDesc& op, size_t i) {
  return i < op.inputs.size() && op.inputs[i].dtype != 0;
}

namespace {

std::vector<int64_t> Contiguous(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

// An explicit view: `<name>_shape` (logical [batch, heads, rows, cols], 4 ints),
// `<name>_strides` (4 ints, elements) and `<name>_offset` (elements) into an input of
// `elements` elements, as lowering writes them when it absorbs slices and reshapes too.
// nullopt when absent; a view reaching outside the input is an error.
Result<std::optional<View4>> ExplicitView(const OpDesc& op, const std::string& name,
                                          int64_t elements) {
  const auto shape = IntsAttr(op, name + "_shape"), strides = IntsAttr(op, name + "_strides");
  if (shape.empty() && strides.empty()) return std::optional<View4>();
  if (shape.size() != 4 || strides.size() != 4)
    return InvalidArgument("FusedAttention: " + name + "_shape and _strides need 4 values");
  View4 v;
  v.offset = IntAttr(op, name + "_offset", 0);
  v.head_group = IntAttr(op, name + "_head_group", 1);
  if (v.head_group < 1 || shape[1] % v.head_group != 0)
    return InvalidArgument("FusedAttention: " + name + "_head_group must divide the heads");
  int64_t last = v.offset;
  for (int a = 0; a < 4; ++a) {
    if (shape[a] < 1 || strides[a] < 0)
      return InvalidArgument("FusedAttention: bad " + name + " view");
    v.dims[a] = shape[a];
    v.strides[a] = shape[a] == 1 ? 0 : strides[a];
    last += ((a == 1 ? shape[a] / v.head_group : shape[a]) - 1) * v.strides[a];
  }
  if (v.offset < 0 || last >= elements)
    return InvalidArgument("FusedAttention: the " + name + " view reaches outside its input");
  return std::optional<View4>(v);
}

std::optional<View4> ViewOf(const std::vector<int64_t>& src, const std::vector<int64_t>& perm) {
  if (src.size() < 2 || src.size() > 4 || perm.size() != src.size()) return std::nullopt;
  const auto st = Contiguous(src);
  View4 v;
  const size_t pad = 4 - src.size();
  std::vector<bool> seen(src.size(), false);
  for (size_t a = 0; a < perm.size(); ++a) {
    if (perm[a] < 0 || perm[a] >= static_cast<int64_t>(src.size()) || seen[perm[a]])
      return std::nullopt;
    seen[perm[a]] = true;
    v.dims[pad + a] = src[perm[a]];
    v.strides[pad + a] = src[perm[a]] == 1 ? 0 : st[perm[a]];
  }
  return v;
}

// A mask broadcast (numpy rules, right-aligned) over the [batch, heads, rows, cols] scores.
std::optional<View4> BroadcastView(const std::vector<int64_t>& dims, const View4& scores) {
  if (dims.size() > 4) return std::nullopt;
  const auto st = Contiguous(dims);
  View4 v;
  v.dims = scores.dims;
  const size_t pad = 4 - dims.size();
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] != 1 && dims[i] != scores.dims[pad + i]) return std::nullopt;
    v.strides[pad + i] = dims[i] == 1 ? 0 : st[i];
  }
  return v;
}

// The output's logical [.., rows, head_dim] is written through out_perm: the stored tensor
// is Transpose(logical, out_perm), so logical axis b sits at stored axis a with out_perm[a]=b.
std::optional<View4> OutputView(const std::vector<int64_t>& stored,
                                const std::vector<int64_t>& out_perm) {
  if (stored.size() < 2 || stored.size() > 4 || out_perm.size() != stored.size())
    return std::nullopt;
  const auto st = Contiguous(stored);
  View4 v;
  const size_t pad = 4 - stored.size();
  for (size_t a = 0; a < out_perm.size(); ++a) {
    const int64_t b = out_perm[a];
    if (b < 0 || b >= static_cast<int64_t>(stored.size())) return std::nullopt;
    v.dims[pad + b] = stored[a];
    v.strides[pad + b] = st[a];
  }
  return v;
}

std::vector<int64_t> PermOr(const OpDesc& op, const std::string& name, size_t rank) {
  auto p = IntsAttr(op, name);
  if (p.empty()) {
    for (size_t i = 0; i < rank; ++i) p.push_back(static_cast<int64_t>(i));
  }
  return p;
}

// DecodeAttentionMerge: its input holds [batch, heads, rows, key_splits, dv + 2] runs, its
// output is the attention's (through out_perm).
Result<Shapes> MergeShapesOf(const OpDesc& op) {
  if (op.inputs.size() != 1 || op.outputs.size() != 1 || op.inputs[0].dims.size() != 5 ||
      op.inputs[0].dtype != onnx::TensorProto::FLOAT)
    return InvalidArgument("DecodeAttentionMerge takes one float [b, h, rows, runs, dv + 2] input");
  const auto& r = op.inputs[0].dims;
  auto out = OutputView(op.outputs[0].dims, PermOr(op, "out_perm", op.outputs[0].dims.size()));
  if (!out || r[3] != IntAttr(op, "key_splits", 0) || r[4] < 3 || out->dims[0] != r[0] ||
      out->dims[1] != r[1] || out->dims[2] != r[2] || out->dims[3] != r[4] - 2)
    return InvalidArgument("DecodeAttentionMerge: its runs and output do not chain");
  Shapes s;
  s.out = *out;
  s.q.dims = {r[0], r[1], r[2], 1};
  s.rows = r[2], s.value_dim = r[4] - 2, s.key_splits = r[3];
  return s;
}

}  // namespace

Result<Shapes> ShapesOf(const OpDesc& op) {
  if (op.op_type == kDecodeMergeOp) return MergeShapesOf(op);
  const bool partial = op.op_type == kDecodePartialOp;
  const bool rotary = op.inputs.size() == 7;
  if ((op.inputs.size() != 5 && !rotary) || op.outputs.size() != 1)
    return InvalidArgument(
        "FusedAttention takes q, k, v, mask, cond (and q's rotary cos, sin) and has one output");
  for (size_t i : {kQ, kK, kV}) {
    if (!Present(op, i) || !IsFloatType(op.inputs[i].dtype))
      return InvalidArgument("FusedAttention: q, k and v must be float tensors");
  }
  Shapes s;
  // Each of q, k, v: an explicit view when lowering wrote one, else its permutation.
  auto view = [&](size_t i, const std::string& name) -> Result<std::optional<View4>> {
    auto explicit_view = ExplicitView(op, name, op.inputs[i].elements());
    if (!explicit_view.ok() || *explicit_view) return explicit_view;
    return ViewOf(op.inputs[i].dims, PermOr(op, name + "_perm", op.inputs[i].dims.size()));
  };
  auto q = view(kQ, "q");
  auto k = view(kK, "k");
  auto v = view(kV, "v");
  for (const auto* r : {&q, &k, &v}) {
    if (!r->ok()) return r->status();
  }
  // DecodeAttentionPartial writes its runs' records, not the output: the output's logical
  // [b, h, rows, dv] stands in for the chaining checks below.
  std::optional<View4> out;
  if (partial && *q && *v) {
    out = View4{};
    out->dims = {(**q).dims[0], (**q).dims[1], (**q).dims[2], (**v).dims[3]};
  } else if (!partial) {
    out = OutputView(op.outputs[0].dims, PermOr(op, "out_perm", op.outputs[0].dims.size()));
  }
  if (!*q || !*k || !*v || !out)
    return InvalidArgument("FusedAttention: bad ranks or permutations");
  s.q = **q, s.k = **k, s.v = **v, s.out = *out;
  s.rows = s.q.dims[2], s.head_dim = s.q.dims[3], s.keys = s.k.dims[2], s.value_dim = s.v.dims[3];
  for (int a = 0; a < 2; ++a) {
    if (s.k.dims[a] != s.q.dims[a] || s.v.dims[a] != s.q.dims[a] || s.out.dims[a] != s.q.dims[a])
      return InvalidArgument(
          "FusedAttention: batch and head dims of q, k, v and the output differ");
  }
  if (s.k.dims[3] != s.head_dim || s.v.dims[2] != s.keys || s.out.dims[2] != s.rows ||
      s.out.dims[3] != s.value_dim)
    return InvalidArgument("FusedAttention: q, k, v and output shapes do not chain");
  s.key_chunk = s.keys;
  if (partial) {
    s.key_splits = IntAttr(op, "key_splits", 0);
    if (s.key_splits < 1 || s.key_splits > s.keys)
      return InvalidArgument("DecodeAttentionPartial: key_splits must be in [1, keys]");
    s.key_chunk = (s.keys + s.key_splits - 1) / s.key_splits;
    const std::vector<int64_t> runs = {s.q.dims[0], s.q.dims[1], s.rows, s.key_splits,
                                       s.value_dim + 2};
    if (op.outputs[0].dtype != onnx::TensorProto::FLOAT || op.outputs[0].dims != runs ||
        (s.keys + s.key_chunk - 1) / s.key_chunk != s.key_splits)
      return InvalidArgument(
          "DecodeAttentionPartial: the output must be float [b, h, rows, key_splits, dv + 2] "
          "and every run hold keys");
  }
  if (rotary) {
    // q_rotary_dim columns of q rotated by tables broadcast over [b, h, rows, table_width].
    s.q_rotary_dim = IntAttr(op, "q_rotary_dim", s.head_dim);
    const auto& cos = op.inputs[kQCos].dims;
    s.table_width = cos.empty() ? 0 : cos.back();
    if (s.q_rotary_dim < 2 || s.q_rotary_dim % 2 != 0 || s.q_rotary_dim > s.head_dim ||
        (s.table_width != s.q_rotary_dim && 2 * s.table_width != s.q_rotary_dim))
      return InvalidArgument(
          "FusedAttention: q_rotary_dim must be even, at most the head size, and the tables' "
          "width it or half of it");
    View4 table;
    table.dims = {s.q.dims[0], s.q.dims[1], s.rows, s.table_width};
    for (size_t i : {kQCos, kQSin}) {
      auto m = IsFloatType(op.inputs[i].dtype) ? BroadcastView(op.inputs[i].dims, table)
                                               : std::optional<View4>();
      if (!m)
        return InvalidArgument(
            "FusedAttention: q's rotary tables must be float and broadcast "
            "over [batch, heads, rows, width]");
      (i == kQCos ? s.q_cos : s.q_sin) = *m;
    }
  }
  View4 scores;
  scores.dims = {s.q.dims[0], s.q.dims[1], s.rows, s.keys};
  for (size_t i : {kMask, kCond}) {
    if (!Present(op, i)) continue;
    auto m = BroadcastView(op.inputs[i].dims, scores);
    if (!m) return InvalidArgument("FusedAttention: mask does not broadcast over the scores");
    (i == kMask ? s.mask : s.cond) = *m;
  }
  return s;
}

std::string Index(const std::string& base, const View4& v, const std::string& row,
                  const std::string& col) {
  return base + " + (" + row + ") * " + IntLiteral(v.strides[2]) + " + (" + col + ") * " +
         IntLiteral(v.strides[3]);
}

std::string BaseOf(const View4& v) {
  const std::string head = v.head_group == 1 ? "h" : "(h / " + IntLiteral(v.head_group) + ")";
  return IntLiteral(v.offset) + " + b * " + IntLiteral(v.strides[0]) + " + " + head + " * " +
         IntLiteral(v.strides[1]);
}

std::string MaskScore(const OpDesc& op, const Shapes& s, const std::string& var,
                      const std::string& row, const std::string& key, const std::string& indent) {
  std::string mask, cond;
  if (Present(op, kMask))
    mask = indent + var + " += " +
           LoadExpr(op.inputs[kMask].dtype, "in3[" + Index("mbase", s.mask, row, key) + "]") +
           ";\n";
  if (Present(op, kCond)) {
    const bool keep_if_true = IntAttr(op, "keep_if_true", 1) != 0;
    cond = indent + "if ((in4[" + Index("cbase", s.cond, row, key) +
           "] != 0) != " + (keep_if_true ? "true" : "false") + ") " + var + " = " +
           FloatLiteral(FloatAttr(op, "fill", 0.0f)) + ";\n";
  }
  return IntAttr(op, "mask_after_where", 0) != 0 ? cond + mask : mask + cond;
}

}  // namespace attention

using namespace attention;

bool IsAttentionOp(const std::string& op_type) {
  return op_type == "FusedAttention" || op_type == kDecodePartialOp || op_type == kDecodeMergeOp ||
         IsAttentionPartOp(op_type);
}

std::string AttentionUnsupported(const OpDesc& op) {
  if (IsAttentionPartOp(op.op_type)) return AttentionPartUnsupported(op);
  auto s = ShapesOf(op);
  if (!s.ok()) return s.status().message();
  if (op.op_type == kDecodeMergeOp)
    return s->value_dim <= kMaxHeadDim ? "" : "DecodeAttentionMerge: value dims up to 128";
  if (op.op_type == kDecodePartialOp && !DecodeAttentionFits(s->rows, s->key_chunk))
    return "DecodeAttentionPartial: at most " + std::to_string(kDecodeMaxRows) + " rows and " +
           std::to_string(kDecodeMaxKeys) + " keys a run";
  if (s->q_rotary_dim > 0 && op.op_type == "FusedAttention" &&
      !DecodeAttentionFits(s->rows, s->keys))
    return "FusedAttention: a rotary query is read by the decode kernel only (at most " +
           std::to_string(kDecodeMaxRows) + " rows and " + std::to_string(kDecodeMaxKeys) +
           " keys)";
  if (s->head_dim > kMaxHeadDim || s->value_dim > kMaxHeadDim)
    return "FusedAttention: head dims up to " + std::to_string(kMaxHeadDim) + " (got " +
           std::to_string(std::max(s->head_dim, s->value_dim)) + ")";
  if (Present(op, kMask) && !IsFloatType(op.inputs[kMask].dtype))
    return "FusedAttention: the additive mask must be a float tensor";
  if (Present(op, kCond) && op.inputs[kCond].dtype != onnx::TensorProto::BOOL)
    return "FusedAttention: the Where condition must be bool";
  return "";
}

namespace {

constexpr int64_t kKeyTile = 32;

// How the work of one (batch, head) is spread: `rows` query rows per block, each row's keys
// split `splits` ways (thread t takes row t % rows and keys j = t / rows (mod splits) of each
// tile); the splits' partial softmax sums are merged through shared memory at the end.
struct Split {
  int64_t rows = 32, splits = 1;
};

Split ChooseSplit(const Shapes& s) {
  constexpr int64_t kSms = 132;             // an H100's SMs: enough warps to cover them twice
  constexpr int64_t kSharedFloats = 12288;  // 48 KiB of static shared memory
  Split p;
  const int64_t heads = s.q.dims[0] * s.q.dims[1];
  if (heads * ((s.rows + 63) / 64) >= kSms || s.rows > 1024) p.rows = 64;
  auto merge_floats = [&](int64_t splits) { return (splits - 1) * p.rows * (s.value_dim + 2); };
  while (p.splits < 4 && heads * ((s.rows + p.rows - 1) / p.rows) * p.splits < 2 * kSms &&
         merge_floats(p.splits * 2) <= kSharedFloats && s.keys >= 8 * p.splits)
    p.splits *= 2;
  return p;
}

}  // namespace

Result<KernelSource> EmitAttention(const std::string& name, const OpDesc& op) {
  if (IsAttentionPartOp(op.op_type)) return EmitAttentionPart(name, op);
  auto shapes = ShapesOf(op);
  if (!shapes.ok()) return shapes.status();
  const Shapes& s = *shapes;
  if (op.op_type == kDecodeMergeOp) return EmitDecodeAttentionMerge(name, op, s);
  if (op.op_type == kDecodePartialOp || DecodeAttentionFits(s.rows, s.keys))
    return EmitDecodeAttention(name, op, s);
  if (s.q_rotary_dim > 0)
    return InvalidArgument("FusedAttention: a rotary query is read by the decode kernel only");
  const int64_t D = s.head_dim, DV = s.value_dim;
  const Split sp = ChooseSplit(s);
  const int64_t R = sp.rows, P = sp.splits, threads = R * P;
  // Tile rows padded by one float: the splits of a warp read different keys without bank
  // conflicts. After the key loop the same memory holds the splits' partial results.
  const int64_t kstride = D + 1, vstride = DV + 1;
  const int64_t tile_floats = kKeyTile * (kstride + vstride);
  const int64_t merge_floats = (P - 1) * R * (DV + 2);
  const float scale = FloatAttr(op, "scale", 1.0f);
  const int32_t qt = op.inputs[kQ].dtype, kt = op.inputs[kK].dtype, vt = op.inputs[kV].dtype;
  const int32_t ot = op.outputs[0].dtype;
  const std::string keys = IntLiteral(s.keys);
  std::ostringstream c;
  c << "extern \"C\" __global__ void " << name << "(" << KernelParams(5, 1) << ") {\n";
  auto ptr = [&](size_t i) {
    const std::string t = StorageCType(op.inputs[i].dtype);
    c << "  const " << t << "* __restrict__ in" << i << " = (const " << t << "*)p" << i << ";\n";
  };
  for (size_t i = 0; i < 5; ++i) {
    if (Present(op, i)) ptr(i);
  }
  c << "  " << StorageCType(ot) << "* __restrict__ out0 = (" << StorageCType(ot) << "*)p5;\n"
    << "  __shared__ float smem[" << std::max(tile_floats, merge_floats) << "];\n"
    << "  float* ktile = smem;\n"
    << "  float* vtile = smem + " << kKeyTile * kstride << ";\n"
    << "  const ortc_i64 b = blockIdx.z, h = blockIdx.y;\n"
    << "  const int lane = threadIdx.x % " << R << ", part = threadIdx.x / " << R << ";\n"
    << "  const ortc_i64 row = (ortc_i64)blockIdx.x * " << R << " + lane;\n"
    << "  const bool active = row < " << IntLiteral(s.rows) << ";\n"
    << "  const ortc_i64 qbase = " << BaseOf(s.q) << ", kbase = " << BaseOf(s.k)
    << ", vbase = " << BaseOf(s.v) << ";\n";
  if (Present(op, kMask)) c << "  const ortc_i64 mbase = " << BaseOf(s.mask) << ";\n";
  if (Present(op, kCond)) c << "  const ortc_i64 cbase = " << BaseOf(s.cond) << ";\n";
  c << "  float qr[" << D << "], acc[" << DV << "];\n"
    << "  for (int d = 0; d < " << D << "; ++d)\n"
    << "    qr[d] = active ? " << LoadExpr(qt, "in0[" + Index("qbase", s.q, "row", "d") + "]")
    << " : 0.f;\n"
    << "  for (int d = 0; d < " << DV << "; ++d) acc[d] = 0.f;\n"
    << "  float peak = " << FloatLiteral(-INFINITY) << ", total = 0.f;\n"
    << "  for (ortc_i64 k0 = 0; k0 < " << keys << "; k0 += " << kKeyTile << ") {\n"
    << "    __syncthreads();\n"
    << "    for (int i = threadIdx.x; i < " << kKeyTile * D << "; i += " << threads << ") {\n"
    << "      const ortc_i64 key = k0 + i / " << D << ", d = i % " << D << ";\n"
    << "      ktile[(i / " << D << ") * " << kstride << " + d] = key < " << keys << " ? "
    << LoadExpr(kt, "in1[" + Index("kbase", s.k, "key", "d") + "]") << " : 0.f;\n"
    << "    }\n"
    << "    for (int i = threadIdx.x; i < " << kKeyTile * DV << "; i += " << threads << ") {\n"
    << "      const ortc_i64 key = k0 + i / " << DV << ", d = i % " << DV << ";\n"
    << "      vtile[(i / " << DV << ") * " << vstride << " + d] = key < " << keys << " ? "
    << LoadExpr(vt, "in2[" + Index("vbase", s.v, "key", "d") + "]") << " : 0.f;\n"
    << "    }\n"
    << "    __syncthreads();\n"
    << "    if (!active) continue;\n"
    << "    const int tile = " << keys << " - k0 < " << kKeyTile << " ? (int)(" << keys
    << " - k0) : " << kKeyTile << ";\n"
    << "    for (int j = part; j < tile; j += " << P << ") {\n"
    << "      float score = 0.f;\n"
    << "      for (int d = 0; d < " << D << "; ++d) score += qr[d] * ktile[j * " << kstride
    << " + d];\n"
    << "      score *= " << FloatLiteral(scale) << ";\n";
  c << MaskScore(op, s, "score", "row", "k0 + j", "      ");
  // Online softmax: rescale what was summed when the running maximum grows; a score of -inf
  // adds nothing (also when every score so far is -inf).
  c << "      if (score == " << FloatLiteral(-INFINITY) << ") continue;\n"
    << "      if (score > peak) {\n"
    << "        const float shrink = expf(peak - score);\n"
    << "        total *= shrink;\n"
    << "        for (int d = 0; d < " << DV << "; ++d) acc[d] *= shrink;\n"
    << "        peak = score;\n"
    << "      }\n"
    << "      const float w = expf(score - peak);\n"
    << "      total += w;\n"
    << "      for (int d = 0; d < " << DV << "; ++d) acc[d] += w * vtile[j * " << vstride
    << " + d];\n"
    << "    }\n"
    << "  }\n";
  if (P > 1) {
    // Splits 1.. hand (peak, total, acc) to split 0 of their row, which merges them.
    const std::string slot =
        "smem + ((part - 1) * " + IntLiteral(R) + " + lane) * " + IntLiteral(DV + 2);
    c << "  __syncthreads();\n"
      << "  if (part > 0) {\n"
      << "    float* mine = " << slot << ";\n"
      << "    mine[0] = peak;\n"
      << "    mine[1] = total;\n"
      << "    for (int d = 0; d < " << DV << "; ++d) mine[2 + d] = acc[d];\n"
      << "  }\n"
      << "  __syncthreads();\n"
      << "  if (part > 0 || !active) return;\n"
      << "  for (int q = 1; q < " << P << "; ++q) {\n"
      << "    const float* other = smem + ((q - 1) * " << R << " + lane) * " << DV + 2 << ";\n"
      << "    const float o_peak = other[0];\n"
      << "    if (o_peak == " << FloatLiteral(-INFINITY) << ") continue;\n"
      << "    const float top = o_peak > peak ? o_peak : peak;\n"
      << "    const float mine_w = peak == " << FloatLiteral(-INFINITY)
      << " ? 0.f : expf(peak - top), other_w = expf(o_peak - top);\n"
      << "    total = total * mine_w + other[1] * other_w;\n"
      << "    for (int d = 0; d < " << DV << "; ++d) acc[d] = acc[d] * mine_w + other[2 + d] * "
      << "other_w;\n"
      << "    peak = top;\n"
      << "  }\n";
  } else {
    c << "  if (!active) return;\n";
  }
  c << "  const float inv = total > 0.f ? 1.f / total : 0.f;\n"
    << "  const ortc_i64 obase = " << BaseOf(s.out) << ";\n"
    << "  for (int d = 0; d < " << DV << "; ++d)\n"
    << "    out0[" << Index("obase", s.out, "row", "d") << "] = " << StoreExpr(ot, "acc[d] * inv")
    << ";\n"
    << "}\n";
  KernelSource k;
  k.name = name;
  k.source = c.str();
  k.num_inputs = 5;
  k.num_outputs = 1;
  k.grid = {static_cast<uint32_t>((s.rows + R - 1) / R), static_cast<uint32_t>(s.q.dims[1]),
            static_cast<uint32_t>(s.q.dims[0])};
  k.block = {static_cast<uint32_t>(threads), 1, 1};
  k.uses_block_sync = true;
  return k;
}

}  // namespace ortc::backends::cuda::codegen
