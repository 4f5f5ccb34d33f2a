// Expansion of ai.onnx Attention (opsets 23 and 24), which PyTorch's exporter writes for
// scaled_dot_product_attention from opset 23 on, into MatMul / Softmax / MatMul in the form the
// CUDA lowering fuses back into one attention kernel (lowering_attention.cpp): the scale after
// Q K^T, a float mask added, one Where for every boolean condition (the mask, is_causal,
// nonpad_kv_seqlen), and the Where(IsNaN(P), 0, P) guard that makes fully masked rows zero,
// as the op's definition asks.
#include <cmath>
#include <limits>

#include "graph/contrib_expansions.h"

namespace ortc::graph::contrib {
namespace {

using T = onnx::TensorProto;

enum Input : size_t { kQ, kK, kV, kMask, kPastKey, kPastValue, kNonpad };
enum Output : size_t { kY, kPresentKey, kPresentValue, kQkOutput };

// Head counts and sizes, from the 4-D shapes or (3-D) the num_heads attributes.
struct Heads {
  int64_t q = 0, kv = 0, qk_size = 0, v_size = 0;
};

}  // namespace

// Attention(Q, K, V, attn_mask?, past_key?, past_value?, nonpad_kv_seqlen?) -> Y,
// present_key?, present_value?, qk_matmul_output?. Q [B, Nq, S, H] or [B, S, Nq * H] (with
// q_num_heads / kv_num_heads); query head h reads key/value head h / (Nq / Nkv).
Status ExpandOnnxAttention(const NodeView& v, Expansion* x) {
  if (!v.Has(kQ) || !v.Has(kK) || !v.Has(kV)) return v.Invalid("needs Q, K and V");
  const bool past = v.Has(kPastKey);
  if (past != v.Has(kPastValue)) return v.Invalid("past_key and past_value go together");
  const bool nonpad = v.Has(kNonpad);
  if (nonpad && past) return v.Invalid("nonpad_kv_seqlen cannot be used with past_key");
  const Facts q = v.InFacts(kQ), k = v.InFacts(kK), val = v.InFacts(kV), mask = v.InFacts(kMask);
  const bool has_mask = v.Has(kMask);
  const int64_t rank = q.rank();
  if (q.rank_known && k.rank_known && val.rank_known && (k.rank() != rank || val.rank() != rank))
    return v.Invalid("Q, K and V must all be 3-D or all 4-D, not of ranks " + std::to_string(rank) +
                     ", " + std::to_string(k.rank()) + " and " + std::to_string(val.rank()));
  const bool ranks_known =
      q.rank_known && k.rank() == rank && val.rank() == rank && (!has_mask || mask.dtype != 0);
  Heads h;
  if (rank == 4) {
    h = {q.Dim(1), k.Dim(1), q.Dim(3), val.Dim(3)};
  } else if (rank == 3) {
    h.q = v.IntAttr("q_num_heads", 0);
    h.kv = v.IntAttr("kv_num_heads", 0);
    if (h.q <= 0 || h.kv <= 0) return v.Invalid("3-D inputs need q_num_heads and kv_num_heads");
    if ((q.Dim(2) > 0 && q.Dim(2) % h.q != 0) || (k.Dim(2) > 0 && k.Dim(2) % h.kv != 0) ||
        (val.Dim(2) > 0 && val.Dim(2) % h.kv != 0))
      return v.Invalid("the hidden sizes are not multiples of the head counts");
    h.qk_size = q.Dim(2) > 0 ? q.Dim(2) / h.q : -1;
    h.v_size = val.Dim(2) > 0 ? val.Dim(2) / h.kv : -1;
  }
  const bool dims_known = h.q > 0 && h.kv > 0 && h.qk_size > 0 && h.v_size > 0;
  if (!ranks_known || !dims_known) {
    // Exporters compute head shapes at run time (Reshape to Concat(Shape...)); other nodes'
    // expansions may tell them. Once nothing else is ready, expand with the missing sizes
    // read from the values' shapes at run time: the rank and element types suffice.
    if (!v.force()) return Status::Ok();
    if (!ranks_known)
      return v.Unsupported("Q, K, V or attn_mask of unknown rank or element type",
                           "give static shapes with --input-shape");
  }
  if (rank != 3 && rank != 4) return v.Invalid("Q, K and V must all be 3-D or all 4-D");
  if (h.q > 0 && h.kv > 0 && h.q % h.kv != 0)
    return v.Invalid(std::to_string(h.q) + " query heads are not a multiple of " +
                     std::to_string(h.kv) + " key/value heads");
  const int64_t mode = v.IntAttr("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) return v.Invalid("qk_matmul_output_mode must be 0 to 3");
  const int64_t softmax_type = v.IntAttr("softmax_precision", 0);
  if (softmax_type != 0 && softmax_type != T::FLOAT && softmax_type != T::FLOAT16 &&
      softmax_type != T::DOUBLE && softmax_type != T::BFLOAT16)
    return v.Invalid("softmax_precision must be a float type");
  const bool bool_mask = has_mask && mask.dtype == T::BOOL;
  if (has_mask && !bool_mask && !IsFloatType(mask.dtype))
    return v.Unsupported("an integer attn_mask", "pass a bool or float mask");
  const int32_t t = v.FloatType({kQ});
  if (t == 0) return Status::Ok();
  Emitter& e = x->Begin(t);

  auto to_heads = [&](const std::string& in, int64_t n, const std::string& tag) {
    if (rank == 4) return in;
    return e.Transpose(e.Reshape(in, {0, 0, n, -1}, tag + "_split"), {0, 2, 1, 3}, tag);
  };
  const std::string qh = to_heads(v.In(kQ), h.q, "q");
  std::string kh = to_heads(v.In(kK), h.kv, "k");
  std::string vh = to_heads(v.In(kV), h.kv, "v");
  // The cache grows inside the op: present = Concat(past, new) along the sequence.
  auto present = [&](const std::string& fresh, size_t past_input, size_t out,
                     const std::string& tag) {
    if (past)
      return e.Op("Concat", {v.In(past_input), fresh}, tag, {IntAttribute("axis", 2)}, v.Out(out));
    if (v.Used(out)) return e.Op("Identity", {fresh}, tag, {}, v.Out(out));
    return fresh;
  };
  kh = present(kh, kPastKey, kPresentKey, "present_key");
  vh = present(vh, kPastValue, kPresentValue, "present_value");
  // Query head h reads key/value head h / group: [B, Nkv, T, D] -> [B, Nq, T, D]. With the head
  // counts unknown at load, the group and the target shape are read at run time (constants once
  // shapes are fixed and folded).
  auto repeat = [&](const std::string& kv, int64_t size, const std::string& tag) {
    if (h.q > 0 && h.q == h.kv) return kv;
    const std::string groups = e.Unsqueeze(kv, {2}, tag + "_groups");  // [B, Nkv, 1, T, D]
    if (h.q > 0 && h.kv > 0 && size > 0)
      return e.Reshape(e.Op("Expand", {groups, e.Int64s(tag + "_group", {1, 1, h.q / h.kv, 1, 1})},
                            tag + "_expanded"),
                       {0, h.q, -1, size}, tag);
    const std::string q_heads = e.DimOf(qh, 1, false, tag + "_q_heads");
    const std::string kv_shape = e.Op("Shape", {kv}, tag + "_shape");
    const std::string group =
        e.Op("Div", {q_heads, e.DimOf(kv, 1, false, tag + "_kv_heads")}, tag + "_group");
    const std::string expand_shape =
        e.Op("Concat", {e.Int64s(tag + "_ones", {1, 1}), group, e.Int64s(tag + "_tail", {1, 1})},
             tag + "_expand_shape", {IntAttribute("axis", 0)});
    const std::string target =
        e.Op("Concat",
             {e.Op("Slice", {kv_shape, e.Int64s(tag + "_b0", {0}), e.Int64s(tag + "_b1", {1})},
                   tag + "_batch"),
              q_heads,
              e.Op("Slice", {kv_shape, e.Int64s(tag + "_t2", {2}), e.Int64s(tag + "_t4", {4})},
                   tag + "_rows")},
             tag + "_target", {IntAttribute("axis", 0)});
    return e.Op("Reshape", {e.Op("Expand", {groups, expand_shape}, tag + "_expanded"), target},
                tag);
  };
  const onnx::AttributeProto* scale_attr = v.Attr("scale");
  std::string scale;
  if (scale_attr) {
    scale = e.Scalar("scale", scale_attr->f());
  } else if (h.qk_size > 0) {
    scale = e.Scalar("scale", 1.0 / std::sqrt(static_cast<double>(h.qk_size)));
  } else {  // 1 / sqrt(head size) of the run-time shape
    scale = e.Op("Div",
                 {e.Scalar("one", 1.0),
                  e.Op("Sqrt", {e.Cast(e.DimOf(qh, 3, true, "head_size"), t, "head_size_float")},
                       "head_size_sqrt")},
                 "scale");
  }
  const std::string kt = e.Transpose(repeat(kh, h.qk_size, "k_rep"), {0, 1, 3, 2}, "k_t");
  std::string scores = e.Op("Mul", {e.Op("MatMul", {qh, kt}, "qk"), scale}, "scores");
  std::string qk_outputs[4];
  qk_outputs[0] = scores;
  const float softcap = v.FloatAttr("softcap", 0.0f);
  if (softcap > 0.0f) {  // softcap * tanh(scores / softcap)
    const std::string cap = e.Scalar("softcap", softcap);
    scores =
        e.Op("Mul", {e.Op("Tanh", {e.Op("Div", {scores, cap}, "capped_in")}, "capped_tanh"), cap},
             "capped");
  }
  qk_outputs[1] = scores;

  // Key positions 0 .. T-1 (T: past + new rows) and, for is_causal, each query's last visible key.
  const std::string seq_q = e.DimOf(qh, 2, true, "q_rows");
  const std::string total = e.DimOf(kh, 2, true, "kv_rows");
  const bool causal = v.IntAttr("is_causal", 0) != 0;
  std::string key_row, nonpad4;  // [1, 1, 1, T], [B, 1, 1, 1]
  if (causal || nonpad)
    key_row = e.Reshape(
        e.Op("Range",
             {e.ScalarOf("key_zero", T::INT64, 0), total, e.ScalarOf("key_one", T::INT64, 1)},
             "key_range"),
        {1, 1, 1, -1}, "key_row");
  if (nonpad)
    nonpad4 = e.Reshape(e.Cast(v.In(kNonpad), T::INT64, "nonpad_int64"), {-1, 1, 1, 1}, "nonpad");
  std::vector<std::string> allowed;  // boolean conditions, all of which a score must meet
  std::string mask_in = has_mask ? v.In(kMask) : "";
  if (has_mask) {
    // Opset 24: a mask shorter than T (but not a broadcast 1) is padded with masked positions.
    const int64_t mask_keys = mask.Dim(-1);
    const int64_t past_rows = past ? v.InFacts(kPastKey).Dim(2) : 0;
    const int64_t new_rows = k.Dim(rank == 4 ? 2 : 1);
    const int64_t keys = past_rows >= 0 && new_rows > 0 ? past_rows + new_rows : -1;
    if (mask_keys > 1 && keys > mask_keys) {
      std::vector<int64_t> pads(2 * mask.rank(), 0);
      pads[2 * mask.rank() - 1] = keys - mask_keys;
      const std::string fill = bool_mask ? e.ScalarOf("mask_pad_false", T::BOOL, 0)
                                         : e.ScalarOf("mask_pad_inf", mask.dtype,
                                                      -std::numeric_limits<double>::infinity());
      mask_in = e.Op("Pad", {mask_in, e.Int64s("mask_pads", pads), fill}, "mask_padded");
    }
    if (bool_mask) {
      allowed.push_back(mask_in);
    } else {
      const std::string additive = mask.dtype == t ? mask_in : e.Cast(mask_in, t, "mask_cast");
      scores = e.Op("Add", {scores, additive}, "masked_add");
    }
  }
  if (causal) {
    // Query i sees key j when j <= i + offset: offset is the past's rows, or with an external
    // cache nonpad_kv_seqlen - S per batch (bottom-right alignment), else 0.
    std::string query_col = e.Reshape(
        e.Op("Range",
             {e.ScalarOf("row_zero", T::INT64, 0), seq_q, e.ScalarOf("row_one", T::INT64, 1)},
             "row_range"),
        {1, 1, -1, 1}, "query_col");
    if (past) {
      query_col =
          e.Op("Add", {query_col, e.DimOf(v.In(kPastKey), 2, true, "past_rows")}, "query_pos");
    } else if (nonpad) {
      query_col =
          e.Op("Add", {query_col, e.Op("Sub", {nonpad4, seq_q}, "nonpad_offset")}, "query_pos");
    }
    allowed.push_back(e.Op("LessOrEqual", {key_row, query_col}, "causal"));
  }
  if (nonpad) allowed.push_back(e.Op("Less", {key_row, nonpad4}, "not_padding"));
  if (!allowed.empty()) {
    std::string cond = allowed[0];
    for (size_t i = 1; i < allowed.size(); ++i)
      cond = e.Op("And", {cond, allowed[i]}, "allowed_" + std::to_string(i));
    scores =
        e.Op("Where", {cond, scores, e.Scalar("masked", -std::numeric_limits<double>::infinity())},
             "masked");
  }
  qk_outputs[2] = scores;
  const bool cast_softmax = softmax_type != 0 && softmax_type != t;
  if (cast_softmax) scores = e.Cast(scores, static_cast<int32_t>(softmax_type), "softmax_in");
  std::string probs = e.Op("Softmax", {scores}, "probs", {IntAttribute("axis", -1)});
  if (cast_softmax) probs = e.Cast(probs, t, "softmax_out");
  // A row whose every key is masked is NaN after the softmax; the op defines it as zeros.
  if (has_mask || nonpad)
    probs = e.Op("Where", {e.Op("IsNaN", {probs}, "probs_nan"), e.Scalar("zero", 0.0), probs},
                 "probs_guarded");
  qk_outputs[3] = probs;
  if (v.Used(kQkOutput)) e.Op("Identity", {qk_outputs[mode]}, "qk_output", {}, v.Out(kQkOutput));
  const std::string context = e.Op("MatMul", {probs, repeat(vh, h.v_size, "v_rep")}, "context", {},
                                   rank == 4 ? v.Out(kY) : "");
  if (rank == 3)
    e.Reshape(e.Transpose(context, {0, 2, 1, 3}, "context_t"), {0, 0, -1}, "merged", v.Out(kY));
  return Status::Ok();
}

}  // namespace ortc::graph::contrib
