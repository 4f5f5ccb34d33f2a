// Expansions of com.microsoft Attention and MultiHeadAttention into MatMul, Reshape, Transpose,
// Softmax and mask arithmetic, with the semantics of ONNX Runtime's documentation and CPU kernels.
#include <cmath>
#include <optional>

#include "graph/contrib_expansions.h"

namespace ortc::graph::contrib {
namespace {

using T = onnx::TensorProto;

constexpr float kDefaultMaskFilter = -10000.0f;

const char* kNoKvCache =
    "export the model without past/present state (no KV cache), or run it with ONNX Runtime";

// What the shared attention core computes: softmax(Q K' * scale + masks) V over `heads` heads.
struct Core {
  std::string q;     // [B, S, Dq]
  std::string k, v;  // [B, T, D], or with kv_split_heads [B, heads, T, head]
  bool kv_split_heads = false;
  int64_t batch = -1;  // when known, to tell a [batch] mask from the other 1-D forms
  int64_t heads = 0;
  int64_t head_size = -1;  // of Q and K; -1: unknown (the default scale is computed at run time)
  std::optional<float> scale;  // attribute `scale` when given and non-zero
  float filter = kDefaultMaskFilter;
  bool causal = false;
  std::string mask;  // mask_index / key_padding_mask, "" when absent
  Facts mask_facts;
  std::string attention_bias;        // added to the scores, [B or 1, heads or 1, S, T]
  std::string out;                   // [B, S, Dv]
  std::string present_k, present_v;  // MultiHeadAttention's [B, heads, T, head] outputs
  std::string present;               // Attention's [2, B, heads, T, head] output
};

std::string Range(Emitter& e, const std::string& length, const std::string& tag) {
  return e.Op(
      "Range",
      {e.ScalarOf(tag + "_start", T::INT64, 0), length, e.ScalarOf(tag + "_step", T::INT64, 1)},
      tag);
}

// The additive bias of a mask, broadcastable to the scores [B, heads, S, T].
Result<std::string> MaskBias(const NodeView& v, Emitter& e, const Core& c,
                             const std::string& key_len) {
  const Facts& f = c.mask_facts;
  const int32_t mt = f.dtype != 0 ? f.dtype : T::INT32;
  const std::string zero = e.Scalar("zero", 0.0), filter = e.Scalar("mask_filter", c.filter);
  switch (f.rank()) {
    case 1: {  // key lengths [B]: positions >= length are masked
      const int64_t batch = c.batch, len = f.Dim(0);
      if (batch > 0 && len > 0 && len != batch) {
        if (len == 2 * batch)
          return v.Unsupported(
              "a mask of shape [2 * batch] (end and start positions, left padding)",
              "pass a 2-D [batch, sequence] 0/1 mask instead");
        return v.Unsupported("a 1-D mask of " + std::to_string(len) + " values for batch " +
                                 std::to_string(batch) + " (only [batch] key lengths are read)",
                             "pass a 2-D [batch, sequence] 0/1 mask instead");
      }
      const std::string col = e.Unsqueeze(Range(e, key_len, "key_positions"), {1}, "key_column");
      std::string keep;  // [T, B]
      auto counted = v.state().float_counts.find(c.mask);
      if (counted != v.state().float_counts.end()) {  // EmbedLayerNormalization's count
        keep =
            e.Op("Less", {e.Cast(col, T::FLOAT, "key_column_float"), counted->second}, "mask_keep");
      } else {
        const std::string typed = mt == T::INT64 ? col : e.Cast(col, mt, "key_column_typed");
        keep = e.Op("Less", {typed, c.mask}, "mask_keep");
      }
      const std::string bias = e.Op("Where", {keep, zero, filter}, "mask_bias_tb");
      return e.Unsqueeze(e.Transpose(bias, {1, 0}, "mask_bias_bt"), {1, 2}, "mask_bias");
    }
    case 2:    // [B, T]
    case 3:    // [B, S, T]
    case 4: {  // [B, 1, M, M] (Megatron): rows and columns 0..S-1, 0..T-1 without a past
      std::string mask = c.mask;
      if (f.rank() == 4) {
        const std::string ends =
            e.Op("Concat",
                 {e.DimOf(c.q, 1, false, "query_len"), e.Unsqueeze(key_len, {0}, "key_len_1d")},
                 "mask_ends", {IntAttribute("axis", 0)});
        mask = e.Op("Slice",
                    {mask, e.Int64s("mask_starts", {0, 0}), ends, e.Int64s("mask_axes", {2, 3})},
                    "mask_window");
      }
      const std::string keep = e.Op("Greater", {mask, e.ScalarOf("mask_zero", mt, 0)}, "mask_keep");
      const std::string bias = e.Op("Where", {keep, zero, filter}, "mask_bias_raw");
      if (f.rank() == 4) return bias;
      return e.Unsqueeze(bias, f.rank() == 2 ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{1},
                         "mask_bias");
    }
    default:
      return v.Invalid("mask of rank " + std::to_string(f.rank()) +
                       " (expected [batch], [batch, total_seq], [batch, seq, total_seq] or "
                       "[batch, 1, max_seq, max_seq])");
  }
}

Status EmitCore(const NodeView& v, Emitter& e, const Core& c) {
  const std::vector<int64_t> split_heads = {0, 0, c.heads, -1};
  const std::string qh = e.Reshape(c.q, split_heads, "q_heads");
  const std::string q = e.Transpose(qh, {0, 2, 1, 3}, "q_bnsh");
  std::string kt, kb, val;  // K' [B, N, h, T], K [B, N, T, h], V [B, N, T, hv]
  if (!c.kv_split_heads) {
    const std::string kh = e.Reshape(c.k, split_heads, "k_heads");
    kt = e.Transpose(kh, {0, 2, 3, 1}, "k_bnhs");
    if (!c.present_k.empty() || !c.present.empty())
      kb = e.Transpose(kh, {0, 2, 1, 3}, "k_bnsh", c.present_k);
    val = e.Transpose(e.Reshape(c.v, split_heads, "v_heads"), {0, 2, 1, 3}, "v_bnsh", c.present_v);
  } else {
    kb = c.k;
    kt = e.Transpose(c.k, {0, 1, 3, 2}, "k_bnhs");
    val = c.v;
    if (!c.present_k.empty()) e.Op("Identity", {c.k}, "present_key", {}, c.present_k);
    if (!c.present_v.empty()) e.Op("Identity", {c.v}, "present_value", {}, c.present_v);
  }
  if (!c.present.empty()) {
    e.Op("Concat", {e.Unsqueeze(kb, {0}, "present_k"), e.Unsqueeze(val, {0}, "present_v")},
         "present", {IntAttribute("axis", 0)}, c.present);
  }

  std::string scores = e.Op("MatMul", {q, kt}, "scores");
  if (c.scale || c.head_size > 0) {
    const double s = c.scale ? *c.scale : 1.0 / std::sqrt(static_cast<double>(c.head_size));
    scores = e.Op("Mul", {scores, e.Scalar("scale", s)}, "scaled");
  } else {  // head size known only at run time: divide by sqrt(head)
    const std::string head =
        e.Cast(e.DimOf(qh, 3, true, "head_size"), e.dtype(), "head_size_float");
    scores = e.Op("Div", {scores, e.Op("Sqrt", {head}, "sqrt_head")}, "scaled");
  }
  const std::string key_len =
      c.mask.empty() && !c.causal ? "" : e.DimOf(c.k, c.kv_split_heads ? 2 : 1, true, "key_len");
  // Padding and causal masks add up (a key masked twice gets twice the filter value).
  std::string bias;
  if (!c.mask.empty()) {
    auto mask_bias = MaskBias(v, e, c, key_len);
    if (!mask_bias.ok()) return mask_bias.status();
    bias = *mask_bias;
  }
  if (c.causal) {  // key j > query i gets the filter value
    const std::string rows = e.Unsqueeze(
        Range(e, e.DimOf(c.q, 1, true, "query_len"), "query_positions"), {1}, "query_column");
    const std::string cols = e.Unsqueeze(Range(e, key_len, "causal_positions"), {0}, "key_row");
    const std::string future = e.Op("Greater", {cols, rows}, "future");
    const std::string causal =
        e.Op("Where", {future, e.Scalar("causal_filter", c.filter), e.Scalar("causal_zero", 0.0)},
             "causal_bias");
    bias = bias.empty() ? causal : e.Op("Add", {bias, causal}, "mask_causal_bias");
  }
  if (!c.mask.empty()) {
    // Softmax ignores a constant per row: shifting each row's bias so its largest value is 0
    // changes nothing, except that a row whose every key is masked keeps its scores' detail
    // instead of sitting at -10000, where fp16 storage rounds to steps of 8.
    const std::string top = e.Reduce("ReduceMax", bias, {-1}, true, "mask_bias_max");
    bias = e.Op("Sub", {bias, top}, "mask_bias_shifted");
  }
  if (!bias.empty()) scores = e.Op("Add", {scores, bias}, "masked");
  if (!c.attention_bias.empty()) scores = e.Op("Add", {scores, c.attention_bias}, "biased");
  const std::string probs = e.Op("Softmax", {scores}, "probs", {IntAttribute("axis", -1)});
  const std::string context = e.Op("MatMul", {probs, val}, "context");
  e.Reshape(e.Transpose(context, {0, 2, 1, 3}, "context_bsnh"), {0, 0, -1}, "output", c.out);
  return Status::Ok();
}

std::optional<float> ScaleAttribute(const NodeView& v) {
  const auto* a = v.Attr("scale");
  if (!a || a->f() == 0.0f) return std::nullopt;
  return a->f();
}

// Common checks; false when the node must wait for shape inference.
Result<bool> ReadMask(const NodeView& v, size_t input, Core* c) {
  if (!v.Has(input)) return true;
  c->mask = v.In(input);
  c->mask_facts = v.InFacts(input);
  if (c->mask_facts.rank_known) return true;
  if (!v.force()) return false;
  return v.Unsupported(
      "the rank of input '" + c->mask + "' (the mask) is unknown",
      "declare its shape in the model, or fix the input shapes with --input-shape");
}

Result<int64_t> Heads(const NodeView& v) {
  const int64_t heads = v.IntAttr("num_heads", 0);
  if (heads <= 0) return v.Invalid("attribute num_heads must be given and positive");
  return heads;
}

}  // namespace

// Attention(input, weights, bias?, mask_index?, past?, attention_bias?, past_sequence_length?):
// QKV = input x weights + bias, split into Q, K and V by qkv_hidden_sizes (equal parts by
// default), then multi-head attention over the same sequence. `present` (when read) is K and V
// stacked: [2, B, heads, S, head].
Status ExpandAttention(const NodeView& v, Expansion* x) {
  if (!v.Has(0) || !v.Has(1)) return v.Invalid("needs input and weights");
  auto heads = Heads(v);
  if (!heads.ok()) return heads.status();
  if (v.Has(4)) return v.Unsupported("input 'past' (KV cache) is not supported", kNoKvCache);
  if (v.Has(6))
    return v.Unsupported("input 'past_sequence_length' (shared KV buffer) is not supported",
                         kNoKvCache);
  if (v.IntAttr("past_present_share_buffer", 0) != 0)
    return v.Unsupported("attribute past_present_share_buffer=1 is not supported", kNoKvCache);
  if (v.IntAttr("do_rotary", 0) != 0)
    return v.Unsupported(
        "attribute do_rotary=1 (rotary embedding inside Attention) is not "
        "supported",
        "keep the rotary embedding as separate ops (turn off the optimizer's "
        "rotary fusion)");
  std::vector<int64_t> sizes = v.IntsAttr("qkv_hidden_sizes");
  if (!sizes.empty()) {
    if (sizes.size() != 3) return v.Invalid("qkv_hidden_sizes must have 3 values");
    for (int64_t s : sizes) {
      if (s <= 0 || s % *heads != 0)
        return v.Invalid("qkv_hidden_sizes " + std::to_string(s) +
                         " is not a positive multiple of num_heads " + std::to_string(*heads));
    }
  } else {
    int64_t total = v.InFacts(1).Dim(1);
    if (total <= 0) total = v.InFacts(2).Dim(0);
    if (total > 0 && total % 3 == 0) sizes = {total / 3, total / 3, total / 3};
  }
  Core c;
  c.batch = v.InFacts(0).Dim(0);
  c.heads = *heads;
  c.head_size = sizes.empty() ? -1 : sizes[0] / *heads;
  c.scale = ScaleAttribute(v);
  c.filter = v.FloatAttr("mask_filter_value", kDefaultMaskFilter);
  c.causal = v.IntAttr("unidirectional", 0) != 0;
  c.attention_bias = v.In(5);
  c.out = v.Out(0);
  if (v.Used(1)) {
    if (!sizes.empty() && sizes[1] != sizes[2])
      return v.Unsupported("output 'present' with different K and V hidden sizes",
                           "leave 'present' unread");
    c.present = v.Out(1);
  }
  auto mask_ready = ReadMask(v, 3, &c);
  if (!mask_ready.ok()) return mask_ready.status();
  const int32_t t = v.FloatType({1, 0, 2});
  const bool sized = c.head_size > 0 || c.scale.has_value();
  if (!*mask_ready || t == 0 || (!sized && !v.force())) return Status::Ok();

  Emitter& e = x->Begin(t);
  std::string qkv = e.Op("MatMul", {v.In(0), v.In(1)}, "qkv");
  if (v.Has(2)) qkv = e.Op("Add", {qkv, v.In(2)}, "qkv_bias");
  const auto parts = e.Split(qkv, -1, sizes, 3, "qkv_split");
  c.q = parts[0];
  c.k = parts[1];
  c.v = parts[2];
  return EmitCore(v, e, c);
}

// MultiHeadAttention(query, key, value, bias?, key_padding_mask?, attention_bias?, ...): Q, K
// and V given separately ([B, S, D]; key and value may already be split into heads,
// [B, heads, T, head]), bias = [Dq + Dk + Dv] added to each. present_key / present_value (when
// read) are K and V split into heads.
Status ExpandMultiHeadAttention(const NodeView& v, Expansion* x) {
  if (!v.Has(0)) return v.Invalid("needs query");
  auto heads = Heads(v);
  if (!heads.ok()) return heads.status();
  if (!v.Has(1))
    return v.Unsupported(
        "packed QKV (query of shape [batch, seq, heads, 3, head] without key and "
        "value) is not supported",
        "give query, key and value as separate inputs");
  if (!v.Has(2))
    return v.Unsupported(
        "packed KV (key of shape [batch, kv_seq, heads, 2, head] without value) "
        "is not supported",
        "give key and value as separate inputs");
  if (v.Has(6) || v.Has(7))
    return v.Unsupported("inputs 'past_key' / 'past_value' (KV cache) are not supported",
                         kNoKvCache);
  if (v.Has(8) || v.Has(9))
    return v.Unsupported(
        "inputs 'past_sequence_length' / 'cache_indirection' (beam search KV "
        "cache) are not supported",
        kNoKvCache);
  if (v.Used(3))
    return v.Unsupported("output 'qk' is not supported", "leave the output 'qk' unread");
  const Facts qf = v.InFacts(0), kf = v.InFacts(1), vf = v.InFacts(2);
  if (qf.rank() == 5)
    return v.Unsupported("packed QKV (query of rank 5) is not supported",
                         "give query, key and value as separate inputs");
  if (kf.rank() == 5)
    return v.Unsupported("packed KV (key of rank 5) is not supported",
                         "give key and value as separate inputs");
  if (!kf.rank_known && !v.force()) return Status::Ok();
  Core c;
  c.kv_split_heads = kf.rank() == 4;  // unknown rank (forced): [B, T, D]
  if (kf.rank_known && kf.rank() != 3 && kf.rank() != 4)
    return v.Invalid("key of rank " + std::to_string(kf.rank()) + " (expected 3 or 4)");
  if (vf.rank_known && kf.rank_known && vf.rank() != kf.rank())
    return v.Invalid("key and value have different ranks");
  if (c.kv_split_heads && v.Has(3))
    return v.Unsupported("bias with key and value already split into heads is not supported",
                         "add the bias before MultiHeadAttention");
  c.batch = qf.Dim(0);
  c.heads = *heads;
  const int64_t dq = qf.Dim(2);
  if (dq > 0) {
    if (dq % c.heads != 0)
      return v.Invalid("query hidden size " + std::to_string(dq) +
                       " is not a multiple of num_heads " + std::to_string(c.heads));
    c.head_size = dq / c.heads;
  } else if (c.kv_split_heads) {
    c.head_size = kf.Dim(3);
  }
  c.scale = ScaleAttribute(v);
  c.filter = v.FloatAttr("mask_filter_value", kDefaultMaskFilter);
  c.causal = v.IntAttr("unidirectional", 0) != 0;
  c.attention_bias = v.In(5);
  c.out = v.Out(0);
  if (v.Used(1)) c.present_k = v.Out(1);
  if (v.Used(2)) c.present_v = v.Out(2);
  std::vector<int64_t> bias_sizes;
  if (v.Has(3) && dq > 0 && kf.Dim(2) > 0 && vf.Dim(2) > 0) bias_sizes = {dq, kf.Dim(2), vf.Dim(2)};
  auto mask_ready = ReadMask(v, 4, &c);
  if (!mask_ready.ok()) return mask_ready.status();
  const int32_t t = v.FloatType({0, 1, 2, 3});
  const bool sized = c.head_size > 0 || c.scale.has_value();
  const bool bias_ready = !v.Has(3) || !bias_sizes.empty();
  if (!*mask_ready || t == 0 || ((!sized || !bias_ready) && !v.force())) return Status::Ok();

  Emitter& e = x->Begin(t);
  c.q = v.In(0);
  c.k = v.In(1);
  c.v = v.In(2);
  if (v.Has(3)) {  // bias_sizes empty (forced): three equal parts
    const auto parts = e.Split(v.In(3), 0, bias_sizes, 3, "bias_split");
    c.q = e.Op("Add", {c.q, parts[0]}, "q_bias");
    c.k = e.Op("Add", {c.k, parts[1]}, "k_bias");
    c.v = e.Op("Add", {c.v, parts[2]}, "v_bias");
  }
  return EmitCore(v, e, c);
}

}  // namespace ortc::graph::contrib
