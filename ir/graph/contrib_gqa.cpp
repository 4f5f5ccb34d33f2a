// Expansion of com.microsoft GroupQueryAttention (GenAI's decoder exports), with the semantics of
// ONNX Runtime's contrib op documentation and CPU kernel, each sequence b of the batch with its
// own length: the past cache's first seqlens_k[b] + 1 - S rows (none when that is negative: a
// prompt), then the new keys and values, form the present cache (max(past rows,
// total_sequence_length) rows, zeros after the valid ones); each query row attends causally to
// it, query head h reading key/value head h / (num_heads / kv_num_heads); optional rotary
// embedding of q and k at their positions.
#include <cmath>

#include "graph/contrib_expansions.h"

namespace ortc::graph::contrib {
namespace {

using T = onnx::TensorProto;

}  // namespace

// GroupQueryAttention(query, key?, value?, past_key?, past_value?, seqlens_k,
// total_sequence_length, cos_cache?, sin_cache?, ...) -> output, present_key, present_value.
// query [B, S, N * H] (or packed [B, S, (N + 2 KV) * H] without key and value), key and value
// [B, S, KV * H], seqlens_k [B], past and present [B, KV, T, H].
Status ExpandGroupQueryAttention(const NodeView& v, Expansion* x) {
  if (!v.Has(0) || !v.Has(5) || !v.Has(6))
    return v.Invalid("needs query, seqlens_k and total_sequence_length");
  if (v.Has(1) != v.Has(2)) return v.Invalid("key and value must be given together");
  if (v.Has(3) != v.Has(4)) return v.Invalid("past_key and past_value must be given together");
  for (size_t i = 9; i < 12; ++i)
    if (v.Has(i))
      return v.Unsupported("position_ids, attention_bias or head_sink inputs",
                           "export without them (positions follow total_sequence_length)");
  if (v.IntAttr("local_window_size", -1) != -1)
    return v.Unsupported("local_window_size (sliding-window attention)", "export full attention");
  if (v.FloatAttr("softcap", 0.0f) != 0.0f || v.IntAttr("smooth_softmax", 0) != 0)
    return v.Unsupported("softcap or smooth_softmax", "export plain softmax attention");
  if (v.IntAttr("qk_output", 0) != 0) return v.Unsupported("qk_output", "leave it at 0");
  const int64_t heads = v.IntAttr("num_heads", 0), kv_heads = v.IntAttr("kv_num_heads", 0);
  if (heads <= 0 || kv_heads <= 0 || heads % kv_heads != 0)
    return v.Invalid("num_heads and kv_num_heads must be positive, num_heads a multiple");
  const Facts q = v.InFacts(0);
  const bool rotary = v.IntAttr("do_rotary", 0) != 0;
  if (rotary && (!v.Has(7) || !v.Has(8)))
    return v.Invalid("do_rotary needs cos_cache and sin_cache");
  const Facts cache = rotary ? v.InFacts(7) : Facts{};
  const bool known = q.rank_known && q.rank() == 3 && q.Dim(2) > 0 &&
                     (!rotary || (cache.rank_known && cache.Dim(1) > 0));
  if (!known) {
    if (!v.force()) return Status::Ok();  // shapes may come in a later round
    return v.Unsupported("query of unknown rank or width", "give static shapes with --input-shape");
  }
  const int64_t packed_width = v.Has(1) ? heads : heads + 2 * kv_heads;
  if (q.Dim(2) % packed_width != 0) return v.Invalid("the query width does not fit the heads");
  const int64_t head = q.Dim(2) / packed_width;
  if (rotary && 2 * cache.Dim(1) != head)
    return v.Unsupported("a rotary dimension other than the head size", "rotate whole heads");
  const int32_t t = v.FloatType({0});
  if (t == 0) return Status::Ok();
  Emitter& e = x->Begin(t);

  std::string query = v.In(0), key = v.In(1), value = v.In(2);
  if (!v.Has(1)) {
    auto parts = e.Split(query, -1, {heads * head, kv_heads * head, kv_heads * head}, 3, "qkv");
    query = parts[0], key = parts[1], value = parts[2];
  }
  auto to_heads = [&](const std::string& t_in, int64_t n, const std::string& tag) {
    return e.Transpose(e.Reshape(t_in, {0, 0, n, head}, tag + "_split"), {0, 2, 1, 3}, tag);
  };
  std::string qh = to_heads(query, heads, "q"), kh = to_heads(key, kv_heads, "k"),
              vh = to_heads(value, kv_heads, "v");
  // The new rows' positions: the valid past is seqlens_k + 1 - S rows (ONNX Runtime's rule;
  // total_sequence_length only sizes the present cache), then past .. past + S - 1.
  const std::string seq = e.DimOf(query, 1, true, "seq_len");
  const std::string total = e.Reshape(e.Cast(v.In(6), T::INT64, "total_int64"), {}, "total");
  // Values derived from seqlens_k are kept 2-D or more ([B, 1]): device work, where 0-D and 1-D
  // integers count as shape arithmetic and stay on the CPU.
  const std::string seqlen =
      e.Reshape(e.Cast(v.In(5), T::INT64, "seqlen_int64"), {-1, 1}, "seqlen");
  const std::string past =
      e.Op("Max",
           {e.Op("Sub", {e.Op("Add", {seqlen, e.ScalarOf("plus_one", T::INT64, 1)}, "valid"), seq},
                 "new_start"),
            e.ScalarOf("no_rows", T::INT64, 0)},
           "past_len");                                                     // [B, 1]
  const std::string past4 = e.Reshape(past, {-1, 1, 1, 1}, "past_len_4d");  // over the cache
  const std::string rows =
      e.Op("Range", {e.ScalarOf("zero", T::INT64, 0), seq, e.ScalarOf("one", T::INT64, 1)}, "rows");
  const std::string positions = e.Op("Add", {past, rows}, "positions");  // [B, S]
  if (rotary) {
    auto table = [&](size_t input, const std::string& tag) {  // [B, 1, S, H / 2]
      return e.Unsqueeze(
          e.Op("Gather", {v.In(input), positions}, tag + "_rows", {IntAttribute("axis", 0)}), {1},
          tag);
    };
    const std::string cos = table(7, "cos"), sin = table(8, "sin");
    const bool interleaved = v.IntAttr("rotary_interleaved", 0) != 0;
    qh = Rotate(e, qh, cos, sin, head / 2, interleaved);
    kh = Rotate(e, kh, cos, sin, head / 2, interleaved);
  }
  // The present cache has max(buffer, total) rows (static when both are, so one compiled graph
  // serves every step of a fixed-size cache): row r is the past's while r < past_len, new row
  // r - past_len for the next S rows, zero after (as ONNX Runtime writes a cache it does not
  // share). Without a past, the new rows are the cache.
  std::string cache_rows, row_index;  // [L], [1, 1, L, 1]
  if (v.Has(3)) {
    cache_rows = e.Op("Max", {e.DimOf(v.In(3), 2, true, "buffer"), total}, "cache_rows");
    row_index = e.Reshape(
        e.Op("Range",
             {e.ScalarOf("row_zero", T::INT64, 0), cache_rows, e.ScalarOf("row_one", T::INT64, 1)},
             "cache_row_range"),
        {1, 1, -1, 1}, "cache_row");
  }
  auto present = [&](size_t past_input, const std::string& fresh, size_t out,
                     const std::string& tag) {
    if (!v.Has(past_input)) return e.Op("Identity", {fresh}, tag, {}, v.Out(out));
    const std::string spare = e.Op(
        "Sub", {cache_rows, e.DimOf(v.In(past_input), 2, true, tag + "_buffer")}, tag + "_spare");
    const std::string pads =
        e.Op("Concat",
             {e.Int64s(tag + "_pads_head", {0, 0, 0, 0, 0, 0}),
              e.Unsqueeze(spare, {0}, tag + "_pad_rows"), e.Int64s(tag + "_pads_tail", {0})},
             tag + "_pads", {IntAttribute("axis", 0)});
    const std::string padded = e.Op("Pad", {v.In(past_input), pads}, tag + "_padded");
    const std::string offset = e.Op("Sub", {row_index, past4}, tag + "_offset");  // [B, 1, L, 1]
    // New row r - past_len at row r, as a one-hot [L, S] product: exact (one term of 1 each),
    // and no integer gather (zero rows where no new row lands).
    const std::string one_hot = e.Cast(
        e.Op("Equal", {offset, e.Reshape(rows, {1, 1, 1, -1}, tag + "_new_index")}, tag + "_lands"),
        e.dtype(), tag + "_one_hot");
    const std::string placed = e.Op("MatMul", {one_hot, fresh}, tag + "_placed");
    const std::string kept =
        e.Op("Where",
             {e.Op("Less", {row_index, past4}, tag + "_is_past"), padded, e.Scalar(tag + "_z", 0)},
             tag + "_kept");
    return e.Op("Add", {kept, placed}, tag, {}, v.Out(out));
  };
  const std::string k_all = present(3, kh, 1, "present_key"),
                    v_all = present(4, vh, 2, "present_value");
  // Query head h reads key/value head h / group: [1, KV, T, H] -> [1, N, T, H].
  auto repeat = [&](const std::string& kv, const std::string& tag) {
    if (heads == kv_heads) return kv;
    const std::string shape = e.Op("Shape", {kv}, tag + "_shape");
    const std::string expanded_shape =
        e.Op("Concat",
             {e.Op("Slice", {shape, e.Int64s(tag + "_s0", {0}), e.Int64s(tag + "_s2", {2})},
                   tag + "_bk"),
              e.Int64s(tag + "_group", {heads / kv_heads}),
              e.Op("Slice", {shape, e.Int64s(tag + "_t2", {2}), e.Int64s(tag + "_t4", {4})},
                   tag + "_th")},
             tag + "_expanded_shape", {IntAttribute("axis", 0)});
    return e.Reshape(
        e.Op("Expand", {e.Unsqueeze(kv, {2}, tag + "_groups"), expanded_shape}, tag + "_expanded"),
        {0, heads, -1, head}, tag);
  };
  const float scale = v.FloatAttr("scale", 0.0f);
  const double s = scale != 0.0f ? scale : 1.0 / std::sqrt(static_cast<double>(head));
  const std::string scores =
      e.Op("Mul",
           {e.Op("MatMul", {qh, e.Transpose(repeat(k_all, "k_rep"), {0, 1, 3, 2}, "k_t")}, "qk"),
            e.Scalar("scale", s)},
           "scores");
  // Causal: key j is visible to the query at position p when j <= p (rows past the valid ones
  // are never visible).
  const std::string keys = e.Op("Range",
                                {e.ScalarOf("key_zero", T::INT64, 0), v.Has(3) ? cache_rows : seq,
                                 e.ScalarOf("key_one", T::INT64, 1)},
                                "key_positions");
  const std::string visible = e.Op(
      "LessOrEqual",
      {e.Reshape(keys, {1, 1, 1, -1}, "key_row"), e.Unsqueeze(positions, {1, 3}, "query_column")},
      "visible");  // [B, 1, S, T]
  const std::string lowest =
      e.Scalar("lowest", t == T::FLOAT16 ? -65504.0 : -3.4028234663852886e38);
  const std::string probs = e.Op("Softmax", {e.Op("Where", {visible, scores, lowest}, "masked")},
                                 "probs", {IntAttribute("axis", -1)});
  const std::string context = e.Op("MatMul", {probs, repeat(v_all, "v_rep")}, "context");
  e.Reshape(e.Transpose(context, {0, 2, 1, 3}, "context_t"), {0, 0, heads * head}, "merged",
            v.Out(0));
  return Status::Ok();
}

}  // namespace ortc::graph::contrib
