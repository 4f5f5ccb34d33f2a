// Shape rules for post-opset-17 op versions. Each follows the ONNX operator specification.
#include "graph/own_shape_rules.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "base/shape_limit.h"

namespace ortc::graph {
namespace {

// A computed dimension, or unknown when it is no length a tensor can have (negative, NaN or past
// 2^40). The arithmetic feeding it is done in long double, which holds any int64 exactly, so
// hostile attributes (pads of INT64_MAX, scales of 1e30) can neither overflow it nor convert
// undefined.
Dim LengthOrUnknown(long double v) {
  if (!(v >= 0 && v <= static_cast<long double>(exec::kMaxTensorElements))) return Dim{};
  return Dim{.value = static_cast<int64_t>(v)};
}

using Rule = std::function<std::optional<std::vector<TensorInfo>>(const RuleInputs&)>;

const onnx::AttributeProto* FindAttr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}
int64_t IntAttr(const onnx::NodeProto& n, const std::string& name, int64_t fallback) {
  const auto* a = FindAttr(n, name);
  return a ? a->i() : fallback;
}
std::vector<int64_t> IntsAttr(const onnx::NodeProto& n, const std::string& name) {
  const auto* a = FindAttr(n, name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>{};
}
std::string StringAttr(const onnx::NodeProto& n, const std::string& name, std::string fallback) {
  const auto* a = FindAttr(n, name);
  return a ? a->s() : fallback;
}
const TensorInfo* Input(const RuleInputs& in, size_t i) {
  return i < in.inputs.size() ? in.inputs[i] : nullptr;
}
Shape UnknownDims(size_t rank) {
  Shape s;
  s.rank_known = true;
  s.dims.resize(rank);
  return s;
}
// Normalises possibly negative axes; nullopt when one is out of range.
std::optional<std::vector<int64_t>> NormaliseAxes(std::vector<int64_t> axes, int64_t rank) {
  for (auto& a : axes) {
    if (a < -rank || a >= rank) return std::nullopt;
    if (a < 0) a += rank;
  }
  return axes;
}

std::optional<std::vector<TensorInfo>> SameAsInput(const RuleInputs& in) {
  const TensorInfo* x = Input(in, 0);
  if (!x) return std::nullopt;
  return std::vector<TensorInfo>{*x};
}

std::optional<std::vector<TensorInfo>> Broadcast(const RuleInputs& in) {
  const TensorInfo* a = Input(in, 0);
  const TensorInfo* b = Input(in, 1);
  if (!a || !b) return std::nullopt;
  return std::vector<TensorInfo>{{a->dtype, BroadcastShapes(a->shape, b->shape)}};
}

// Reduce* since opset 18: axes is an optional second input.
std::optional<std::vector<TensorInfo>> Reduce(const RuleInputs& in) {
  const TensorInfo* x = Input(in, 0);
  if (!x) return std::nullopt;
  TensorInfo out{x->dtype, {}};
  const bool keepdims = IntAttr(*in.node, "keepdims", 1) != 0;
  const bool noop_empty = IntAttr(*in.node, "noop_with_empty_axes", 0) != 0;
  if (!x->shape.rank_known) return std::vector<TensorInfo>{out};
  const auto rank = static_cast<int64_t>(x->shape.dims.size());
  std::optional<std::vector<int64_t>> axes;
  if (Input(in, 1)) {
    axes = in.constant_ints(1);
    if (!axes) {  // axes known only at run time
      if (keepdims) out.shape = UnknownDims(rank);
      return std::vector<TensorInfo>{out};
    }
  } else {
    axes = std::vector<int64_t>{};
  }
  if (axes->empty()) {
    if (noop_empty) return std::vector<TensorInfo>{*x};
    for (int64_t i = 0; i < rank; ++i) axes->push_back(i);
  }
  auto norm = NormaliseAxes(*axes, rank);
  if (!norm) return std::nullopt;
  out.shape.rank_known = true;
  for (int64_t i = 0; i < rank; ++i) {
    bool reduced = std::find(norm->begin(), norm->end(), i) != norm->end();
    if (!reduced) {
      out.shape.dims.push_back(x->shape.dims[i]);
    } else if (keepdims) {
      out.shape.dims.push_back(Dim{.value = 1});
    }
  }
  return std::vector<TensorInfo>{out};
}

// Split since opset 18: `split` input or `num_outputs` attribute (last chunk may be smaller).
std::optional<std::vector<TensorInfo>> Split(const RuleInputs& in) {
  const TensorInfo* x = Input(in, 0);
  if (!x) return std::nullopt;
  const size_t outputs = static_cast<size_t>(in.node->output_size());
  std::vector<TensorInfo> outs(outputs, TensorInfo{x->dtype, {}});
  if (!x->shape.rank_known || outputs == 0) return outs;  // no parts: nothing to divide by
  const auto rank = static_cast<int64_t>(x->shape.dims.size());
  int64_t axis = IntAttr(*in.node, "axis", 0);
  if (axis < -rank || axis >= rank) return std::nullopt;
  if (axis < 0) axis += rank;
  std::optional<std::vector<int64_t>> sizes;
  if (Input(in, 1)) {
    sizes = in.constant_ints(1);
  } else if (x->shape.dims[axis].known()) {
    const int64_t dim = x->shape.dims[axis].value;
    const int64_t parts = static_cast<int64_t>(outputs);
    const int64_t chunk = dim / parts + (dim % parts != 0);  // dim + parts - 1 may overflow
    sizes = std::vector<int64_t>();
    for (int64_t i = 0; i < parts; ++i)
      sizes->push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
  }
  for (size_t i = 0; i < outputs; ++i) {
    outs[i].shape = x->shape;
    outs[i].shape.dims[axis] = Dim{};
    if (sizes && sizes->size() == outputs) outs[i].shape.dims[axis].value = (*sizes)[i];
  }
  return outs;
}

// Pad since opset 18: optional `axes` input selects which axes the pads apply to.
std::optional<std::vector<TensorInfo>> Pad(const RuleInputs& in) {
  const TensorInfo* x = Input(in, 0);
  if (!x) return std::nullopt;
  TensorInfo out{x->dtype, {}};
  if (!x->shape.rank_known) return std::vector<TensorInfo>{out};
  const auto rank = static_cast<int64_t>(x->shape.dims.size());
  out.shape = UnknownDims(rank);
  auto pads = in.constant_ints(1);
  std::optional<std::vector<int64_t>> axes;
  if (Input(in, 3)) {
    axes = in.constant_ints(3);
    if (axes) axes = NormaliseAxes(*axes, rank);
  } else {
    axes = std::vector<int64_t>();
    for (int64_t i = 0; i < rank; ++i) axes->push_back(i);
  }
  if (!pads || !axes || pads->size() != 2 * axes->size()) return std::vector<TensorInfo>{out};
  for (int64_t i = 0; i < rank; ++i) out.shape.dims[i] = x->shape.dims[i];
  const size_t n = axes->size();
  for (size_t k = 0; k < n; ++k) {
    Dim& d = out.shape.dims[(*axes)[k]];
    if (d.known()) {
      d = LengthOrUnknown(static_cast<long double>(d.value) + (*pads)[k] + (*pads)[k + n]);
    } else {
      d = Dim{};
    }
  }
  return std::vector<TensorInfo>{out};
}

// Resize since opset 18: `axes` and `keep_aspect_ratio_policy` attributes.
std::optional<std::vector<TensorInfo>> Resize(const RuleInputs& in) {
  const TensorInfo* x = Input(in, 0);
  if (!x) return std::nullopt;
  TensorInfo out{x->dtype, {}};
  if (!x->shape.rank_known) return std::vector<TensorInfo>{out};
  const auto rank = static_cast<int64_t>(x->shape.dims.size());
  out.shape = x->shape;
  std::vector<int64_t> axes = IntsAttr(*in.node, "axes");
  if (axes.empty()) {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  auto norm = NormaliseAxes(axes, rank);
  if (!norm) return std::nullopt;
  auto sizes = Input(in, 3) ? in.constant_ints(3) : std::nullopt;
  auto scales = Input(in, 2) ? in.constant_floats(2) : std::nullopt;
  if (scales && scales->empty()) scales.reset();
  if (sizes && sizes->size() == norm->size()) {
    const std::string policy = StringAttr(*in.node, "keep_aspect_ratio_policy", "stretch");
    if (policy == "stretch") {
      for (size_t k = 0; k < norm->size(); ++k)
        out.shape.dims[(*norm)[k]] = Dim{.value = (*sizes)[k]};
      return std::vector<TensorInfo>{out};
    }
    // not_larger / not_smaller: one scale for all axes, then round.
    double scale = policy == "not_larger" ? 1e300 : 0.0;
    for (size_t k = 0; k < norm->size(); ++k) {
      const Dim& d = x->shape.dims[(*norm)[k]];
      if (!d.known() || d.value == 0) return std::vector<TensorInfo>{{x->dtype, UnknownDims(rank)}};
      double s = static_cast<double>((*sizes)[k]) / static_cast<double>(d.value);
      scale = policy == "not_larger" ? std::min(scale, s) : std::max(scale, s);
    }
    for (size_t k = 0; k < norm->size(); ++k) {
      Dim& d = out.shape.dims[(*norm)[k]];
      d = LengthOrUnknown(std::round(scale * static_cast<double>(d.value)));
    }
    return std::vector<TensorInfo>{out};
  }
  if (scales && scales->size() == norm->size()) {
    for (size_t k = 0; k < norm->size(); ++k) {
      Dim& d = out.shape.dims[(*norm)[k]];
      if (d.known()) {
        d = LengthOrUnknown(std::floor(static_cast<double>(d.value) * (*scales)[k]));
      } else {
        d = Dim{};
      }
      d.symbol.clear();
    }
    return std::vector<TensorInfo>{out};
  }
  return std::vector<TensorInfo>{{x->dtype, UnknownDims(rank)}};
}

// AveragePool (19, dilations) and LpPool (18, ceil_mode): standard pooling arithmetic.
std::optional<std::vector<TensorInfo>> Pool(const RuleInputs& in) {
  const TensorInfo* x = Input(in, 0);
  if (!x) return std::nullopt;
  TensorInfo out{x->dtype, {}};
  if (!x->shape.rank_known || x->shape.dims.size() < 3) return std::vector<TensorInfo>{out};
  const size_t spatial = x->shape.dims.size() - 2;
  auto kernel = IntsAttr(*in.node, "kernel_shape");
  if (kernel.size() != spatial) return std::nullopt;
  auto strides = IntsAttr(*in.node, "strides");
  auto dilations = IntsAttr(*in.node, "dilations");
  auto pads = IntsAttr(*in.node, "pads");
  strides.resize(spatial, 1);
  dilations.resize(spatial, 1);
  pads.resize(2 * spatial, 0);
  const bool ceil_mode = IntAttr(*in.node, "ceil_mode", 0) != 0;
  const std::string auto_pad = StringAttr(*in.node, "auto_pad", "NOTSET");
  out.shape = x->shape;
  for (size_t i = 0; i < spatial; ++i) {
    Dim& d = out.shape.dims[2 + i];
    if (!d.known()) {
      d = Dim{};
      continue;
    }
    // In long double (see LengthOrUnknown): attributes are only known to be >= 1 here.
    const long double in_dim = d.value, stride = strides[i];
    const long double eff_kernel = static_cast<long double>(dilations[i]) * (kernel[i] - 1) + 1;
    if (stride < 1) {
      d = Dim{};
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      d = LengthOrUnknown(std::ceil(in_dim / stride));
    } else if (auto_pad == "VALID") {
      d = LengthOrUnknown(std::floor((in_dim - eff_kernel) / stride) + 1);
    } else {
      const long double steps = (in_dim + pads[i] + pads[i + spatial] - eff_kernel) / stride;
      long double n = (ceil_mode ? std::ceil(steps) : std::floor(steps)) + 1;
      // With ceil_mode, a window that starts inside the end padding is dropped.
      if (ceil_mode && (n - 1) * stride >= in_dim + pads[i]) n -= 1;
      d = LengthOrUnknown(n);
    }
  }
  return std::vector<TensorInfo>{out};
}

std::optional<std::vector<TensorInfo>> Quantize(const RuleInputs& in) {
  const TensorInfo* x = Input(in, 0);
  if (!x) return std::nullopt;
  int32_t dtype = static_cast<int32_t>(IntAttr(*in.node, "output_dtype", 0));
  if (dtype == 0) dtype = Input(in, 2) ? Input(in, 2)->dtype : onnx::TensorProto::UINT8;
  return std::vector<TensorInfo>{{dtype, x->shape}};
}

std::optional<std::vector<TensorInfo>> Dequantize(const RuleInputs& in) {
  const TensorInfo* x = Input(in, 0);
  const TensorInfo* scale = Input(in, 1);
  if (!x || !scale) return std::nullopt;
  // Opset 23's output_dtype names the output type; without it the scale's type is.
  const int32_t dtype = static_cast<int32_t>(IntAttr(*in.node, "output_dtype", 0));
  return std::vector<TensorInfo>{{dtype != 0 ? dtype : scale->dtype, x->shape}};
}

const std::map<std::string, Rule>& Rules() {
  static const std::map<std::string, Rule> rules = {
      {"AveragePool", Pool},
      {"BitwiseAnd", Broadcast},
      {"BitwiseNot", SameAsInput},
      {"BitwiseOr", Broadcast},
      {"BitwiseXor", Broadcast},
      {"DequantizeLinear", Dequantize},
      {"Gelu", SameAsInput},
      {"GroupNormalization", SameAsInput},
      {"LpPool", Pool},
      {"Mish", SameAsInput},
      {"Pad", Pad},
      {"QuantizeLinear", Quantize},
      {"ReduceL1", Reduce},
      {"ReduceL2", Reduce},
      {"ReduceLogSum", Reduce},
      {"ReduceLogSumExp", Reduce},
      {"ReduceMax", Reduce},
      {"ReduceMean", Reduce},
      {"ReduceMin", Reduce},
      {"ReduceProd", Reduce},
      {"ReduceSumSquare", Reduce},
      {"Resize", Resize},
      {"Split", Split},
  };
  return rules;
}

}  // namespace

Shape BroadcastShapes(const Shape& a, const Shape& b) {
  if (!a.rank_known || !b.rank_known) return {};
  Shape out;
  out.rank_known = true;
  const size_t rank = std::max(a.dims.size(), b.dims.size());
  out.dims.resize(rank);
  for (size_t i = 0; i < rank; ++i) {
    const Dim* da = i < rank - a.dims.size() ? nullptr : &a.dims[i - (rank - a.dims.size())];
    const Dim* db = i < rank - b.dims.size() ? nullptr : &b.dims[i - (rank - b.dims.size())];
    if (!da) {
      out.dims[i] = *db;
    } else if (!db) {
      out.dims[i] = *da;
    } else if (da->known() && da->value == 1) {
      out.dims[i] = *db;
    } else if (db->known() && db->value == 1) {
      out.dims[i] = *da;
    } else if (da->known()) {
      out.dims[i] = *da;
    } else if (db->known()) {
      out.dims[i] = *db;
    } else if (da->symbol == db->symbol) {
      out.dims[i] = *da;
    }
  }
  return out;
}

std::optional<std::vector<TensorInfo>> ApplyOwnShapeRule(const RuleInputs& in) {
  auto it = Rules().find(in.node->op_type());
  if (it == Rules().end()) return std::nullopt;
  return it->second(in);
}

}  // namespace ortc::graph
