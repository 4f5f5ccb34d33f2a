// Expansions of com.microsoft RotaryEmbedding (GenAI's Llama-family exports write it before
// GroupQueryAttention), with the semantics of ONNX Runtime's contrib op documentation and CPU
// kernel: rotate-half or interleaved pairs, full or partial rotary dimension, positions as
// [B, S] ids or one offset; and of ai.onnx RotaryEmbedding-23 (the same rotation, its caches
// read at optional position ids).
#include "graph/contrib_expansions.h"

namespace ortc::graph::contrib {

using T = onnx::TensorProto;

std::string Rotate(Emitter& e, const std::string& x, const std::string& cos, const std::string& sin,
                   int64_t half, bool interleaved) {
  // (a, b) -> (a cos - b sin, b cos + a sin) for each rotated pair.
  auto rotate = [&](const std::string& a, const std::string& b, const std::string& c,
                    const std::string& s) {
    const std::string first =
        e.Op("Sub", {e.Op("Mul", {a, c}, "a_cos"), e.Op("Mul", {b, s}, "b_sin")}, "rotated_first");
    const std::string second =
        e.Op("Add", {e.Op("Mul", {b, c}, "b_cos"), e.Op("Mul", {a, s}, "a_sin")}, "rotated_second");
    return std::pair{first, second};
  };
  if (!interleaved) {
    auto halves = e.Split(x, -1, {half, half}, 2, "halves");
    auto [first, second] = rotate(halves[0], halves[1], cos, sin);
    return e.Op("Concat", {first, second}, "rotated", {IntAttribute("axis", -1)});
  }
  // pairs (x[2i], x[2i+1]): [..., half, 2]
  auto pairs = e.Split(e.Reshape(x, {0, 0, 0, half, 2}, "pairs"), -1, {1, 1}, 2, "pair");
  auto [first, second] = rotate(pairs[0], pairs[1], e.Unsqueeze(cos, {-1}, "cos_pairs"),
                                e.Unsqueeze(sin, {-1}, "sin_pairs"));
  return e.Reshape(e.Op("Concat", {first, second}, "rotated_pairs", {IntAttribute("axis", -1)}),
                   {0, 0, 0, 2 * half}, "rotated");
}

namespace {

// Rotates the first 2 * half of each head of xs ([B, S, N, head] when `bsnh`, else
// [B, N, S, head]) by cos and sin (broadcast over the heads) and writes the result, in X's
// layout (3-D [B, S, N * head] when `bsnh`), to `out`.
void RotateHeads(Emitter& e, const std::string& xs, const std::string& cos, const std::string& sin,
                 int64_t half, int64_t head, bool interleaved, bool bsnh, const std::string& out) {
  std::string rot = xs, pass;
  if (2 * half < head) {
    auto parts = e.Split(xs, -1, {2 * half, head - 2 * half}, 2, "partial");
    rot = parts[0];
    pass = parts[1];
  }
  std::string rotated = Rotate(e, rot, cos, sin, half, interleaved);
  if (!pass.empty())
    rotated = e.Op("Concat", {rotated, pass}, "with_pass", {IntAttribute("axis", -1)});
  if (bsnh) {
    e.Reshape(rotated, {0, 0, -1}, "merged", out);
  } else {
    e.Op("Identity", {rotated}, "output", {}, out);
  }
}

}  // namespace

// RotaryEmbedding(input, position_ids, cos_cache, sin_cache) -> output, input [B, S, hidden]
// or [B, N, S, head], caches [max_position, R / 2] (R: rotary_embedding_dim, else the head
// size), position_ids [B, S] or [1] (an offset added to 0..S-1).
Status ExpandRotaryEmbedding(const NodeView& v, Expansion* x) {
  if (!v.Has(0) || !v.Has(1) || !v.Has(2) || !v.Has(3))
    return v.Invalid("needs input, position_ids, cos_cache and sin_cache");
  if (v.IntAttr("is_packed_batching", 0) != 0)
    return v.Unsupported("packed batching", "export with padded batches");
  const float scale = v.FloatAttr("scale", 1.0f);
  if (scale != 1.0f) return v.Unsupported("scale " + std::to_string(scale), "fold it into q/k");
  const Facts in = v.InFacts(0), pos = v.InFacts(1), cache = v.InFacts(2);
  const bool known = in.rank_known && pos.rank_known && cache.rank_known && cache.Dim(1) > 0 &&
                     (in.rank() != 3 || in.Dim(2) > 0);
  if (!known) {
    if (!v.force()) return Status::Ok();  // shapes may come in a later round
    return v.Unsupported("input, position or cache shapes unknown", "give static shapes");
  }
  if (in.rank() != 3 && in.rank() != 4) return v.Invalid("input must be 3-D or 4-D");
  if (pos.rank() != 1 && pos.rank() != 2) return v.Invalid("position_ids must be 1-D or 2-D");
  const int64_t half = cache.Dim(1), rotary = 2 * half;
  const int64_t num_heads = v.IntAttr("num_heads", 0);
  int64_t head = in.rank() == 4 ? in.Dim(3) : 0;
  if (in.rank() == 3) {
    const int64_t hidden = in.Dim(2);
    head = num_heads > 0 ? hidden / num_heads : rotary;
    if (head <= 0 || hidden % head != 0)
      return v.Invalid("hidden size " + std::to_string(hidden) + " is not a multiple of the head");
  }
  const int64_t rotary_dim = v.IntAttr("rotary_embedding_dim", 0);
  if ((rotary_dim != 0 && rotary_dim != rotary) || head <= 0 || rotary > head)
    return v.Invalid("the caches' width " + std::to_string(half) + " does not fit the head size " +
                     std::to_string(head));
  const int32_t t = v.FloatType({0, 2, 3});
  if (t == 0) return Status::Ok();
  Emitter& e = x->Begin(t);
  // x as [B, S, N, head] (3-D) or [B, N, S, head]; the caches at each position, broadcast over
  // the heads: [B, S, 1, half] or [B, 1, S, half] (B is 1 for an offset).
  const bool bsnh = in.rank() == 3;
  const std::string xs = bsnh ? e.Reshape(v.In(0), {0, 0, -1, head}, "heads") : v.In(0);
  std::string positions = v.In(1);
  if (pos.rank() == 1) {  // offset + [[0 .. S-1]], as [1, S]: a 2-D value, device work
    const std::string seq = e.DimOf(v.In(0), bsnh ? 1 : 2, true, "seq_len");
    const std::string range = e.Op(
        "Range", {e.ScalarOf("zero", T::INT64, 0), seq, e.ScalarOf("one", T::INT64, 1)}, "range");
    positions = e.Op("Add", {e.Unsqueeze(range, {0}, "range_row"), v.In(1)}, "positions");
  }
  const int64_t head_axis = bsnh ? 2 : 1;
  auto table = [&](size_t input, const std::string& tag) {
    const std::string rows =
        e.Op("Gather", {v.In(input), positions}, tag + "_rows", {IntAttribute("axis", 0)});
    return e.Unsqueeze(rows, {head_axis}, tag);
  };
  std::string cos = table(2, "cos"), sin = table(3, "sin");
  RotateHeads(e, xs, cos, sin, half, head, v.IntAttr("interleaved", 0) != 0, bsnh, v.Out(0));
  return Status::Ok();
}

// RotaryEmbedding-23(X, cos_cache, sin_cache, position_ids?) -> Y, ONNX's op: X [B, N, S, head]
// or [B, S, hidden] with num_heads; caches [max_position, R / 2] read at position_ids [B, S],
// or without position_ids the [B, S, R / 2] values themselves (R: rotary_embedding_dim, else the
// head size).
Status ExpandOnnxRotaryEmbedding(const NodeView& v, Expansion* x) {
  if (!v.Has(0) || !v.Has(1) || !v.Has(2)) return v.Invalid("needs X, cos_cache and sin_cache");
  const bool has_positions = v.Has(3);
  const Facts in = v.InFacts(0), cache = v.InFacts(1), pos = v.InFacts(3);
  const bool known = in.rank_known && cache.rank_known && cache.Dim(-1) > 0 &&
                     (in.rank() != 3 || in.Dim(2) > 0) && (in.rank() != 4 || in.Dim(3) > 0) &&
                     (!has_positions || pos.rank_known);
  if (!known) {
    if (!v.force()) return Status::Ok();  // shapes may come in a later round
    return v.Unsupported("input, position or cache shapes unknown", "give static shapes");
  }
  if (in.rank() != 3 && in.rank() != 4) return v.Invalid("X must be 3-D or 4-D");
  if (has_positions && (cache.rank() != 2 || pos.rank() != 2))
    return v.Invalid("with position_ids the caches must be 2-D and position_ids 2-D");
  if (!has_positions && cache.rank() != 3)
    return v.Invalid("without position_ids the caches must be 3-D [batch, sequence, R / 2]");
  const int64_t half = cache.Dim(-1), rotary = 2 * half;
  const int64_t num_heads = v.IntAttr("num_heads", 0);
  int64_t head = in.rank() == 4 ? in.Dim(3) : 0;
  if (in.rank() == 3) {
    if (num_heads <= 0) return v.Invalid("a 3-D X needs the num_heads attribute");
    if (in.Dim(2) % num_heads != 0)
      return v.Invalid("hidden size " + std::to_string(in.Dim(2)) + " is not a multiple of " +
                       std::to_string(num_heads) + " heads");
    head = in.Dim(2) / num_heads;
  }
  const int64_t rotary_dim = v.IntAttr("rotary_embedding_dim", 0);
  if ((rotary_dim != 0 && rotary_dim != rotary) || (rotary_dim == 0 && rotary != head) ||
      rotary > head || head % 2 != 0)
    return v.Invalid("the caches' width " + std::to_string(half) + " does not fit the head size " +
                     std::to_string(head) + " and rotary_embedding_dim " +
                     std::to_string(rotary_dim));
  const int32_t t = v.FloatType({0, 1, 2});
  if (t == 0) return Status::Ok();
  Emitter& e = x->Begin(t);
  const bool bsnh = in.rank() == 3;
  const std::string xs = bsnh ? e.Reshape(v.In(0), {0, 0, num_heads, head}, "heads") : v.In(0);
  const int64_t head_axis = bsnh ? 2 : 1;
  auto table = [&](size_t input, const std::string& tag) {  // [B, S, half] -> over the heads
    const std::string rows = has_positions ? e.Op("Gather", {v.In(input), v.In(3)}, tag + "_rows",
                                                  {IntAttribute("axis", 0)})
                                           : v.In(input);
    return e.Unsqueeze(rows, {head_axis}, tag);
  };
  RotateHeads(e, xs, table(1, "cos"), table(2, "sin"), half, head, v.IntAttr("interleaved", 0) != 0,
              bsnh, v.Out(0));
  return Status::Ok();
}

}  // namespace ortc::graph::contrib
