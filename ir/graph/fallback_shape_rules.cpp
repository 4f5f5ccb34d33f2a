// Fallback shape rules (see fallback_shape_rules.h), one per family of ops: broadcasting
// elementwise ops (with their result type), unary ops, Where, Cast, Expand, Range and the
// indexing ops. Each follows the ONNX operator specification.
#include "graph/fallback_shape_rules.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include "base/shape_limit.h"
#include "graph/opset_support.h"

namespace ortc::graph {
namespace {

using onnx::TensorProto;
using Rule = std::optional<std::vector<TensorInfo>> (*)(const RuleInputs&);
using Infos = std::optional<std::vector<TensorInfo>>;

const TensorInfo* Input(const RuleInputs& in, size_t i) {
  return i < in.inputs.size() ? in.inputs[i] : nullptr;
}

int64_t IntAttr(const onnx::NodeProto& n, const std::string& name, int64_t fallback) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return a.i();
  }
  return fallback;
}

std::optional<std::vector<int64_t>> KnownInts(const RuleInputs& in, size_t i) {
  if (!Input(in, i)) return std::nullopt;
  if (in.known_ints) return in.known_ints(i);
  return in.constant_ints ? in.constant_ints(i) : std::nullopt;
}

Shape FromDims(const std::vector<int64_t>& dims) {
  Shape s;
  s.rank_known = true;
  for (int64_t d : dims) s.dims.push_back(d >= 0 ? Dim{.value = d} : Dim{});
  return s;
}

// Broadcast of every present input; the result type is `dtype`, or input 0's when 0.
Infos BroadcastAll(const RuleInputs& in, int32_t dtype, size_t first = 0) {
  const TensorInfo* a = Input(in, first);
  if (!a) return std::nullopt;
  Shape s = a->shape;
  for (size_t i = first + 1; i < in.inputs.size(); ++i) {
    if (const TensorInfo* b = Input(in, i)) s = BroadcastShapes(s, b->shape);
  }
  return std::vector<TensorInfo>{{dtype ? dtype : a->dtype, s}};
}

Infos Comparison(const RuleInputs& in) {
  return BroadcastAll(in, TensorProto::BOOL);
}
Infos SameTypeBroadcast(const RuleInputs& in) {
  return BroadcastAll(in, 0);
}

Infos Unary(const RuleInputs& in) {
  const TensorInfo* x = Input(in, 0);
  if (!x) return std::nullopt;
  std::vector<TensorInfo> outs(static_cast<size_t>(in.node->output_size()), *x);
  return outs;
}

Infos Predicate(const RuleInputs& in) {  // IsNaN, IsInf: a bool per element
  const TensorInfo* x = Input(in, 0);
  if (!x) return std::nullopt;
  return std::vector<TensorInfo>{{TensorProto::BOOL, x->shape}};
}

Infos Where(const RuleInputs& in) {
  const TensorInfo* c = Input(in, 0);
  const TensorInfo* x = Input(in, 1);
  const TensorInfo* y = Input(in, 2);
  if (!c || !x || !y) return std::nullopt;
  return std::vector<TensorInfo>{{x->dtype ? x->dtype : y->dtype,
                                  BroadcastShapes(BroadcastShapes(c->shape, x->shape), y->shape)}};
}

Infos Cast(const RuleInputs& in) {
  const TensorInfo* x = Input(in, 0);
  if (!x) return std::nullopt;
  int32_t to = static_cast<int32_t>(IntAttr(*in.node, "to", 0));
  if (in.node->op_type() == "CastLike") {
    const TensorInfo* like = Input(in, 1);
    if (!like) return std::nullopt;
    to = like->dtype;
  }
  return std::vector<TensorInfo>{{to, x->shape}};
}

Infos Expand(const RuleInputs& in) {
  const TensorInfo* x = Input(in, 0);
  if (!x) return std::nullopt;
  const auto target = KnownInts(in, 1);
  if (!target) {
    // The rank is that of the longer of the input and the shape vector.
    const TensorInfo* s = Input(in, 1);
    if (s && s->shape.rank_known && s->shape.dims.size() == 1 && s->shape.dims[0].known() &&
        x->shape.rank_known) {
      const auto n = static_cast<size_t>(
          std::min<int64_t>(s->shape.dims[0].value, 1024));  // bounded: a hostile [1e12]
      Shape out;
      out.rank_known = true;
      out.dims.resize(std::max(n, x->shape.dims.size()));
      return std::vector<TensorInfo>{{x->dtype, out}};
    }
    return std::vector<TensorInfo>{{x->dtype, {}}};
  }
  for (int64_t d : *target) {
    if (d < 0) return std::nullopt;  // no valid Expand target
  }
  return std::vector<TensorInfo>{{x->dtype, BroadcastShapes(x->shape, FromDims(*target))}};
}

Infos Range(const RuleInputs& in) {
  const TensorInfo* s = Input(in, 0);
  if (!s) return std::nullopt;
  Shape out;
  out.rank_known = true;
  out.dims.resize(1);
  const bool integral = s->dtype == TensorProto::INT64 || s->dtype == TensorProto::INT32 ||
                        s->dtype == TensorProto::INT16;
  if (integral) {
    const auto start = KnownInts(in, 0), limit = KnownInts(in, 1), delta = KnownInts(in, 2);
    if (start && limit && delta && start->size() == 1 && limit->size() == 1 && delta->size() == 1 &&
        (*delta)[0] != 0) {
      const long double n = std::ceil((static_cast<long double>((*limit)[0]) - (*start)[0]) /
                                      static_cast<long double>((*delta)[0]));
      const long double len = n < 0 ? 0 : n;
      if (len <= static_cast<long double>(exec::kMaxTensorElements))
        out.dims[0].value = static_cast<int64_t>(len);
    }
  } else if (in.constant_floats) {
    const auto start = in.constant_floats(0), limit = in.constant_floats(1),
               delta = in.constant_floats(2);
    if (start && limit && delta && start->size() == 1 && limit->size() == 1 && delta->size() == 1 &&
        (*delta)[0] != 0) {
      const double n = std::ceil(((*limit)[0] - (*start)[0]) / (*delta)[0]);
      const double len = n < 0 || std::isnan(n) ? 0 : n;
      if (len <= static_cast<double>(exec::kMaxTensorElements))
        out.dims[0].value = static_cast<int64_t>(len);
    }
  }
  return std::vector<TensorInfo>{{s->dtype, out}};
}

// Gather: data[:axis] + indices + data[axis + 1:].
Infos Gather(const RuleInputs& in) {
  const TensorInfo* data = Input(in, 0);
  const TensorInfo* idx = Input(in, 1);
  if (!data || !idx) return std::nullopt;
  TensorInfo out{data->dtype, {}};
  if (!data->shape.rank_known || !idx->shape.rank_known) return std::vector<TensorInfo>{out};
  const auto rank = static_cast<int64_t>(data->shape.dims.size());
  int64_t axis = IntAttr(*in.node, "axis", 0);
  if (axis < -rank || axis >= rank) return std::nullopt;
  if (axis < 0) axis += rank;
  out.shape.rank_known = true;
  for (int64_t i = 0; i < axis; ++i) out.shape.dims.push_back(data->shape.dims[i]);
  for (const auto& d : idx->shape.dims) out.shape.dims.push_back(d);
  for (int64_t i = axis + 1; i < rank; ++i) out.shape.dims.push_back(data->shape.dims[i]);
  return std::vector<TensorInfo>{out};
}

// GatherND: indices[:-1] + data[batch_dims + k:], k = indices' last dim.
Infos GatherNd(const RuleInputs& in) {
  const TensorInfo* data = Input(in, 0);
  const TensorInfo* idx = Input(in, 1);
  if (!data || !idx) return std::nullopt;
  TensorInfo out{data->dtype, {}};
  if (!data->shape.rank_known || !idx->shape.rank_known || idx->shape.dims.empty() ||
      !idx->shape.dims.back().known())
    return std::vector<TensorInfo>{out};
  const int64_t b = IntAttr(*in.node, "batch_dims", 0);
  const int64_t k = idx->shape.dims.back().value;
  const auto rank = static_cast<int64_t>(data->shape.dims.size());
  if (b < 0 || k < 1 || b + k > rank || b >= static_cast<int64_t>(idx->shape.dims.size()))
    return std::nullopt;
  out.shape.rank_known = true;
  for (size_t i = 0; i + 1 < idx->shape.dims.size(); ++i)
    out.shape.dims.push_back(idx->shape.dims[i]);
  for (int64_t i = b + k; i < rank; ++i) out.shape.dims.push_back(data->shape.dims[i]);
  return std::vector<TensorInfo>{out};
}

Infos GatherElements(const RuleInputs& in) {
  const TensorInfo* data = Input(in, 0);
  const TensorInfo* idx = Input(in, 1);
  if (!data || !idx) return std::nullopt;
  return std::vector<TensorInfo>{{data->dtype, idx->shape}};
}

Infos LikeData(const RuleInputs& in) {  // ScatterND, ScatterElements, Trilu, CumSum...
  const TensorInfo* data = Input(in, 0);
  if (!data) return std::nullopt;
  return std::vector<TensorInfo>{*data};
}

Infos Normalization(const RuleInputs& in) {  // output 0 like X; statistics are not needed here
  const TensorInfo* x = Input(in, 0);
  if (!x) return std::nullopt;
  std::vector<TensorInfo> outs(static_cast<size_t>(in.node->output_size()));
  outs[0] = *x;
  return outs;
}

// Einsum without ellipses: each output letter takes its size from an input that has it; an
// implicit output is the letters used once, in alphabetical order.
Infos Einsum(const RuleInputs& in) {
  std::string eq;
  for (const auto& a : in.node->attribute()) {
    if (a.name() == "equation") eq = a.s();
  }
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  if (eq.empty() || eq.find('.') != std::string::npos || !Input(in, 0)) return std::nullopt;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms(1);
  for (char c : lhs) {
    if (c == ',') {
      terms.emplace_back();
    } else {
      terms.back() += c;
    }
  }
  if (terms.size() != in.inputs.size()) return std::nullopt;
  std::map<char, Dim> size;
  std::map<char, int> uses;
  for (size_t t = 0; t < terms.size(); ++t) {
    const TensorInfo* x = Input(in, t);
    if (!x) return std::nullopt;
    const bool ranked = x->shape.rank_known && x->shape.dims.size() == terms[t].size();
    for (size_t k = 0; k < terms[t].size(); ++k) {
      const char c = terms[t][k];
      ++uses[c];
      if (ranked && x->shape.dims[k].known() && !(size[c].known() && size[c].value != 1))
        size[c] = x->shape.dims[k];
    }
  }
  std::string out;
  if (arrow != std::string::npos) {
    out = eq.substr(arrow + 2);
  } else {
    for (const auto& [c, n] : uses) {
      if (n == 1) out += c;
    }
  }
  TensorInfo info{Input(in, 0)->dtype, {}};
  info.shape.rank_known = true;
  for (char c : out) {
    if (!uses.count(c)) return std::nullopt;
    info.shape.dims.push_back(size[c]);
  }
  return std::vector<TensorInfo>{info};
}

const std::map<std::string, Rule>& Rules() {
  static const std::map<std::string, Rule> rules = [] {
    std::map<std::string, Rule> r;
    for (const char* op :
         {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"})
      r[op] = Comparison;
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Mod", "BitShift", "BitwiseAnd",
                           "BitwiseOr", "BitwiseXor", "PRelu", "Max", "Min", "Sum", "Mean"})
      r[op] = SameTypeBroadcast;
    for (const char* op :
         {"Neg",       "Abs",     "Not",        "Relu",           "Sigmoid",  "Tanh",
          "Exp",       "Log",     "Sqrt",       "Reciprocal",     "Sin",      "Cos",
          "Tan",       "Erf",     "Floor",      "Ceil",           "Round",    "Sign",
          "Identity",  "Softmax", "LogSoftmax", "Clip",           "Gelu",     "LeakyRelu",
          "Elu",       "Selu",    "Celu",       "Softplus",       "Softsign", "HardSigmoid",
          "HardSwish", "Mish",    "BitwiseNot", "ThresholdedRelu"})
      r[op] = Unary;
    for (const char* op : {"ScatterND", "ScatterElements", "Trilu", "CumSum"}) r[op] = LikeData;
    // ONNX 1.12 defines it as a function without an inference function.
    r["MeanVarianceNormalization"] = Unary;
    r["IsNaN"] = Predicate;
    r["IsInf"] = Predicate;
    r["Where"] = Where;
    r["Cast"] = Cast;
    r["CastLike"] = Cast;
    r["Expand"] = Expand;
    r["Range"] = Range;
    r["Gather"] = Gather;
    r["GatherND"] = GatherNd;
    r["GatherElements"] = GatherElements;
    r["LayerNormalization"] = Normalization;
    r["Einsum"] = Einsum;
    return r;
  }();
  return rules;
}

}  // namespace

std::optional<std::vector<TensorInfo>> ApplyFallbackShapeRule(const RuleInputs& in) {
  auto it = Rules().find(in.node->op_type());
  if (it == Rules().end() || !IsDefaultDomain(in.node->domain())) return std::nullopt;
  return it->second(in);
}

TensorInfo MergeInfo(const TensorInfo& known, const TensorInfo& rule) {
  TensorInfo out = known;
  if (out.dtype == 0) out.dtype = rule.dtype;
  if (!out.shape.rank_known) {
    out.shape = rule.shape;
  } else if (rule.shape.rank_known && rule.shape.dims.size() == out.shape.dims.size()) {
    for (size_t d = 0; d < out.shape.dims.size(); ++d) {
      if (!out.shape.dims[d].known() && rule.shape.dims[d].known())
        out.shape.dims[d] = rule.shape.dims[d];
    }
  }
  return out;
}

}  // namespace ortc::graph
