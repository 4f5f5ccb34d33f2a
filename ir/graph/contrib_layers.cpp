// Expansions of Gelu, BiasGelu, FastGelu, SkipLayerNormalization and EmbedLayerNormalization, with
// the semantics of ONNX Runtime's contrib op documentation and CPU kernels.
#include <cmath>

#include "graph/contrib_expansions.h"

namespace ortc::graph::contrib {
namespace {

using T = onnx::TensorProto;

constexpr float kDefaultEpsilon = 1e-12f;  // SkipLayerNormalization, EmbedLayerNormalization

// input + skip (+ bias, input `bias`), written to output `sum_output` when it is used: the
// residual sum of the Skip*LayerNormalization ops.
std::string SkipSum(const NodeView& v, Emitter& e, size_t bias, size_t sum_output) {
  const std::string out = v.Used(sum_output) ? v.Out(sum_output) : "";
  if (!v.Has(bias)) return e.Op("Add", {v.In(0), v.In(1)}, "add_skip", {}, out);
  return e.Op("Add", {e.Op("Add", {v.In(0), v.In(1)}, "add_skip"), v.In(bias)}, "add_bias", {},
              out);
}

}  // namespace

// Gelu(x) = 0.5 * x * (1 + erf(x / sqrt(2))); BiasGelu(x, bias) = Gelu(x + bias).
Status ExpandGelu(const NodeView& v, Expansion* x) {
  const bool bias = v.node().op_type == "BiasGelu";
  if (!v.Has(0) || (bias && !v.Has(1))) return v.Invalid(bias ? "needs X and bias" : "needs X");
  const int32_t t = v.FloatType(bias ? std::vector<size_t>{0, 1} : std::vector<size_t>{0});
  if (t == 0) return Status::Ok();
  Emitter& e = x->Begin(t);
  std::string in = v.In(0);
  if (bias) in = e.Op("Add", {in, v.In(1)}, "bias_add");
  if (e.opset() >= 20) {  // the standard op, exact form
    e.Op("Gelu", {in}, "gelu", {}, v.Out(0));
    return Status::Ok();
  }
  const std::string scaled = e.Op("Div", {in, e.Scalar("sqrt2", std::sqrt(2.0))}, "div");
  const std::string erf = e.Op("Erf", {scaled}, "erf");
  const std::string one_plus = e.Op("Add", {erf, e.Scalar("one", 1.0)}, "add_one");
  const std::string product = e.Op("Mul", {in, one_plus}, "mul");
  e.Op("Mul", {product, e.Scalar("half", 0.5)}, "mul_half", {}, v.Out(0));
  return Status::Ok();
}

// FastGelu(x [, bias]) = 0.5 * y * (1 + tanh(y * (0.797885 + 0.035677 * y * y))), y = x + bias:
// the tanh approximation, written as ONNX Runtime's function body writes it.
Status ExpandFastGelu(const NodeView& v, Expansion* x) {
  if (!v.Has(0)) return v.Invalid("needs X");
  const int32_t t = v.FloatType({0, 1});
  if (t == 0) return Status::Ok();
  Emitter& e = x->Begin(t);
  std::string y = v.In(0);
  if (v.Has(1)) y = e.Op("Add", {y, v.In(1)}, "bias_add");
  if (e.opset() >= 20) {  // the standard op's tanh form (constants equal to 6 digits)
    e.Op("Gelu", {y}, "gelu", {StringAttribute("approximate", "tanh")}, v.Out(0));
    return Status::Ok();
  }
  const std::string square = e.Op("Mul", {y, y}, "square");
  const std::string cubic = e.Op("Mul", {e.Scalar("c", 0.035677), square}, "mul_c");
  const std::string inner = e.Op("Add", {e.Scalar("b", 0.797885), cubic}, "add_b");
  const std::string arg = e.Op("Mul", {y, inner}, "mul_arg");
  const std::string th = e.Op("Tanh", {arg}, "tanh");
  const std::string one_plus = e.Op("Add", {e.Scalar("one", 1.0), th}, "add_one");
  const std::string product = e.Op("Mul", {y, one_plus}, "mul");
  e.Op("Mul", {e.Scalar("half", 0.5), product}, "mul_half", {}, v.Out(0));
  return Status::Ok();
}

// SkipLayerNormalization(input, skip, gamma [, beta] [, bias]): LayerNorm(input + skip + bias)
// over the last axis. Outputs mean and inv_std_var ([..., 1], float) and input_skip_bias_sum
// are written when something reads them.
Status ExpandSkipLayerNorm(const NodeView& v, Expansion* x) {
  if (!v.Has(0) || !v.Has(1) || !v.Has(2)) return v.Invalid("needs input, skip and gamma");
  const int32_t t = v.FloatType({0, 1, 2});
  if (t == 0) return Status::Ok();
  Emitter& e = x->Begin(t);
  const std::string sum = SkipSum(v, e, 4, 3);
  e.LayerNorm(sum, v.In(2), v.In(3), v.FloatAttr("epsilon", kDefaultEpsilon), v.Out(0),
              v.Used(1) ? v.Out(1) : "", v.Used(2) ? v.Out(2) : "");
  return Status::Ok();
}

// SimplifiedLayerNormalization(X, scale) -> Y, inv_std_var?: RMS normalization over the
// last axis (ONNX Runtime's RMSNorm; axis other than the last is refused).
Status ExpandSimplifiedLayerNorm(const NodeView& v, Expansion* x) {
  if (!v.Has(0) || !v.Has(1)) return v.Invalid("needs X and scale");
  const Facts in = v.InFacts(0);
  const int64_t axis = v.IntAttr("axis", -1);
  if (axis != -1 && !(in.rank_known && axis == in.rank() - 1)) {
    if (!in.rank_known && !v.force()) return Status::Ok();  // the rank may come later
    return v.Unsupported("axis " + std::to_string(axis) + " (only the last axis is supported)",
                         "normalize over the last axis");
  }
  const int32_t t = v.FloatType({0, 1});
  if (t == 0) return Status::Ok();
  if (v.Used(1) && !v.Used(0)) return v.Invalid("inv_std_var is used without Y");
  // Its default epsilon is LayerNormalization's, 1e-5 (the Skip form's is 1e-12).
  x->Begin(t).RmsNorm(v.In(0), v.In(1), v.FloatAttr("epsilon", 1e-5f), v.Out(0),
                      v.Used(1) ? v.Out(1) : "");
  return Status::Ok();
}

// SkipSimplifiedLayerNormalization(input, skip, gamma, bias?) -> output, mean?, inv_std_var?,
// input_skip_bias_sum?: RMS normalization of input + skip (+ bias) over the last axis.
Status ExpandSkipSimplifiedLayerNorm(const NodeView& v, Expansion* x) {
  if (!v.Has(0) || !v.Has(1) || !v.Has(2)) return v.Invalid("needs input, skip and gamma");
  if (v.Used(1))
    return v.Unsupported("the mean output (RMS normalization computes no mean)",
                         "leave output 1 unused, as ONNX Runtime's fusions do");
  const int32_t t = v.FloatType({0, 1, 2});
  if (t == 0) return Status::Ok();
  Emitter& e = x->Begin(t);
  const std::string sum = SkipSum(v, e, 3, 3);
  e.RmsNorm(sum, v.In(2), v.FloatAttr("epsilon", kDefaultEpsilon), v.Out(0),
            v.Used(2) ? v.Out(2) : "");
  return Status::Ok();
}

// EmbedLayerNormalization(input_ids, segment_ids?, word_embedding, position_embedding,
// segment_embedding?, gamma, beta, mask?, position_ids?): LayerNorm(word[ids] + position[pos]
// (+ segment[segment_ids])), positions 0..S-1 unless position_ids are given. mask_index is the
// number of ones in each row of mask (zeros without a mask), as ONNX Runtime computes it;
// embedding_sum is the sum before LayerNorm.
Status ExpandEmbedLayerNorm(const NodeView& v, Expansion* x) {
  for (size_t i : {0, 2, 3, 5, 6}) {
    if (!v.Has(i))
      return v.Invalid("needs input_ids, word_embedding, position_embedding, gamma and beta");
  }
  if (v.Has(1) != v.Has(4))
    return v.Invalid("segment_ids and segment_embedding must be given together");
  const int32_t t = v.FloatType({2, 3, 5, 6});
  if (t == 0) return Status::Ok();
  Emitter& e = x->Begin(t);
  const std::string ids = v.In(0);
  const std::string word = e.Op("Gather", {v.In(2), ids}, "word", {IntAttribute("axis", 0)});
  std::string position;
  if (v.Has(8)) {
    position = e.Op("Gather", {v.In(3), v.In(8)}, "position", {IntAttribute("axis", 0)});
  } else {  // rows 0..S-1 of the table: [S, hidden], broadcast over the batch
    position = e.Op("Slice",
                    {v.In(3), e.Int64s("position_start", {0}), e.DimOf(ids, 1, false, "seq_len"),
                     e.Int64s("position_axis", {0})},
                    "position");
  }
  const std::string sum_out = v.Used(2) ? v.Out(2) : "";
  std::string sum;
  if (v.Has(1)) {
    const std::string segment =
        e.Op("Gather", {v.In(4), v.In(1)}, "segment", {IntAttribute("axis", 0)});
    sum = e.Op("Add", {e.Op("Add", {word, position}, "add_position"), segment}, "add_segment", {},
               sum_out);
  } else {
    sum = e.Op("Add", {word, position}, "add_position", {}, sum_out);
  }
  e.LayerNorm(sum, v.In(5), v.In(6), v.FloatAttr("epsilon", kDefaultEpsilon), v.Out(0));
  if (!v.Used(1)) return Status::Ok();
  if (!v.Has(7)) {  // no mask: zeros, [batch]
    T zero;
    zero.set_data_type(T::INT32);
    zero.add_dims(1);
    zero.add_int32_data(0);
    onnx::AttributeProto value;
    value.set_name("value");
    value.set_type(onnx::AttributeProto::TENSOR);
    *value.mutable_t() = zero;
    e.Op("ConstantOfShape", {e.DimOf(ids, 0, false, "batch")}, "mask_index", {value}, v.Out(1));
    return Status::Ok();
  }
  int32_t mask_type = v.InFacts(7).dtype;
  if (mask_type == 0) mask_type = T::INT32;
  const std::string ones = e.Op("Equal", {v.In(7), e.ScalarOf("one", mask_type, 1)}, "mask_ones");
  const std::string count =
      e.Reduce("ReduceSum", e.Cast(ones, T::FLOAT, "mask_float"), {1}, false, "mask_count");
  e.Cast(count, T::INT32, "mask_index", v.Out(1));
  v.state().float_counts[v.Out(1)] = count;
  return Status::Ok();
}

}  // namespace ortc::graph::contrib
