// Expansions of ai.onnx ops newer than the linked ONNX library that are elementwise or row
// work: RMSNormalization-23, Swish-24 and TensorScatter-24, each into the older ops its ONNX
// definition is written with, in the forms the CUDA lowering fuses again (the RMS row kernel,
// x * sigmoid(x)).
#include "graph/contrib_expansions.h"

namespace ortc::graph::contrib {
namespace {

using T = onnx::TensorProto;

}  // namespace

// RMSNormalization(X, scale) -> Y: X / sqrt(mean(X^2 over axes axis..r-1) + epsilon) * scale,
// the first stage in float (stash_type 1, the default; ortc computes it in float for any
// stash_type, which is at least as precise for 16-bit inputs), Y in scale's type.
Status ExpandRmsNormalization(const NodeView& v, Expansion* x) {
  if (!v.Has(0) || !v.Has(1)) return v.Invalid("needs X and scale");
  const Facts in = v.InFacts(0), scale = v.InFacts(1);
  if (!in.rank_known || in.dtype == 0 || scale.dtype == 0) {
    if (!v.force()) return Status::Ok();
    if (!in.rank_known) return v.Unsupported("X of unknown rank", "give static shapes");
  }
  const int64_t rank = in.rank();
  int64_t axis = v.IntAttr("axis", -1);
  if (axis < -rank || axis >= rank)
    return v.Invalid("axis " + std::to_string(axis) + " is outside X's rank " +
                     std::to_string(rank));
  if (axis < 0) axis += rank;
  const float epsilon = v.FloatAttr("epsilon", 1e-5f);
  const int32_t t = v.FloatType({0});
  if (t == 0) return Status::Ok();
  const int32_t out_type = scale.dtype != 0 ? scale.dtype : t;
  Emitter& e = x->Begin(t);
  if (axis == rank - 1 && out_type == t) {
    e.RmsNorm(v.In(0), v.In(1), epsilon, v.Out(0));  // the form SimplifiedLayerNorm has
    return Status::Ok();
  }
  std::vector<int64_t> axes;
  for (int64_t a = axis; a < rank; ++a) axes.push_back(a);
  const bool narrow = t != T::FLOAT && t != T::DOUBLE;
  const int32_t ct = narrow ? T::FLOAT : t;
  const std::string xf = narrow ? e.Cast(v.In(0), T::FLOAT, "rms_cast") : v.In(0);
  const std::string mean_square =
      e.Reduce("ReduceMean", e.Op("Mul", {xf, xf}, "rms_square"), axes, true, "rms_mean_square");
  const std::string rms =
      e.Op("Sqrt", {e.Op("Add", {mean_square, e.ScalarOf("rms_epsilon", ct, epsilon)}, "rms_eps")},
           "rms");
  std::string y = e.Op("Div", {xf, rms}, "rms_normalized");
  if (ct != out_type) y = e.Cast(y, out_type, "rms_cast_out");
  e.Op("Mul", {y, v.In(1)}, "rms_scaled", {}, v.Out(0));
  return Status::Ok();
}

// Swish(X) -> X * sigmoid(alpha * X).
Status ExpandSwish(const NodeView& v, Expansion* x) {
  if (!v.Has(0)) return v.Invalid("needs X");
  const int32_t t = v.FloatType({0});
  if (t == 0) return Status::Ok();
  const float alpha = v.FloatAttr("alpha", 1.0f);
  Emitter& e = x->Begin(t);
  const std::string scaled = alpha == 1.0f
                                 ? v.In(0)  // SiLU, the form the fusions know
                                 : e.Op("Mul", {v.In(0), e.Scalar("alpha", alpha)}, "scaled");
  e.Op("Mul", {v.In(0), e.Op("Sigmoid", {scaled}, "sigmoid")}, "swish", {}, v.Out(0));
  return Status::Ok();
}

// TensorScatter(past_cache, update, write_indices?) -> present_cache: along `axis` (the cache's
// max_sequence_length rows), row write_indices[b] + i of batch b takes update row i (modulo
// the row count in "circular" mode); every other row is the past's. Written as a gather of the
// update at each cache row's offset and a select, so that it has no data-dependent shape.
Status ExpandTensorScatter(const NodeView& v, Expansion* x) {
  if (!v.Has(0) || !v.Has(1)) return v.Invalid("needs past_cache and update");
  const Facts cache = v.InFacts(0), update = v.InFacts(1);
  if (!cache.rank_known || !update.rank_known || cache.dtype == 0) {
    if (!v.force()) return Status::Ok();
    return v.Unsupported("past_cache or update of unknown rank or type", "give static shapes");
  }
  const int64_t rank = cache.rank();
  if (update.rank() != rank) return v.Invalid("past_cache and update must have the same rank");
  int64_t axis = v.IntAttr("axis", -2);
  if (axis < -rank || axis >= rank)
    return v.Invalid("axis " + std::to_string(axis) + " is outside the rank " +
                     std::to_string(rank));
  if (axis < 0) axis += rank;
  if (axis == 0) return v.Invalid("axis cannot be 0 (the batch)");
  const onnx::AttributeProto* mode_attr = v.Attr("mode");
  const std::string mode = mode_attr ? mode_attr->s() : "linear";
  if (mode != "linear" && mode != "circular")
    return v.Invalid("mode '" + mode + "' is neither linear nor circular");
  Emitter& e = x->Begin(cache.dtype);
  // Cache row r along axis, shaped to broadcast over the others: [1, .., L, .., 1].
  std::vector<int64_t> row_shape(rank, 1), batch_shape(rank, 1);
  row_shape[axis] = -1;
  batch_shape[0] = -1;
  const std::string rows =
      e.Reshape(e.Op("Range",
                     {e.ScalarOf("zero", T::INT64, 0), e.DimOf(v.In(0), axis, true, "max_rows"),
                      e.ScalarOf("one", T::INT64, 1)},
                     "row_range"),
                row_shape, "rows");
  std::string offset = rows;  // update row landing at cache row r: r - write_indices[b]
  if (v.Has(2)) {
    const std::string start =
        e.Reshape(e.Cast(v.In(2), T::INT64, "start_int64"), batch_shape, "start");
    offset = e.Op("Sub", {rows, start}, "offset");
  }
  const std::string count = e.DimOf(v.In(1), axis, true, "update_rows");
  if (mode == "circular") {
    offset = e.Op("Mod", {offset, e.DimOf(v.In(0), axis, true, "modulus")}, "offset_mod",
                  {IntAttribute("fmod", 0)});
  }
  const std::string lands =
      e.Op("And",
           {e.Op("GreaterOrEqual", {offset, e.ScalarOf("first", T::INT64, 0)}, "from_first"),
            e.Op("Less", {offset, count}, "before_end")},
           "lands");
  // The offset clamped into the update's rows, over the cache's shape, read by GatherElements.
  const std::string clamped =
      e.Op("Min",
           {e.Op("Max", {offset, e.ScalarOf("low", T::INT64, 0)}, "clamp_low"),
            e.Op("Sub", {count, e.ScalarOf("last", T::INT64, 1)}, "last_row")},
           "clamped");
  const std::string index_shape = e.Op("Shape", {v.In(0)}, "cache_shape");
  const std::string index = e.Op("Expand", {clamped, index_shape}, "index");
  // GatherElements needs the index's other dims within the update's; they are equal (only the
  // axis differs), so the index has the cache's shape and the gather the cache's shape too.
  const std::string gathered =
      e.Op("GatherElements", {v.In(1), index}, "gathered", {IntAttribute("axis", axis)});
  e.Op("Where", {lands, gathered, v.In(0)}, "scatter", {}, v.Out(0));
  return Status::Ok();
}

}  // namespace ortc::graph::contrib
