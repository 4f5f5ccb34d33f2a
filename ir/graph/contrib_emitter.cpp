// The contrib expansions' emitter (standard nodes at the model's opset, typed constants) and
// their view of a node: inputs, outputs, attributes and what inference knows of each value.
#include "graph/contrib_emitter.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace ortc::graph::contrib {
namespace {

using T = onnx::TensorProto;

// IEEE binary16 bits of `f`, rounded to nearest even (overflow to infinity).
uint16_t HalfBits(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);   // NaN
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past 65504
  if (abs < 0x38800000u) {  // below the smallest normal half: subnormal or zero
    const float scaled = std::bit_cast<float>(abs) * 16777216.0f;  // * 2^24 -> units of 2^-24
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(scaled)));
  }
  uint32_t mant = abs + 0xc8000000u;  // rebias exponent 127 -> 15, keep 23 mantissa bits
  mant += 0x0fffu + ((mant >> 13) & 1u);
  return static_cast<uint16_t>(sign | (mant >> 13));
}

uint16_t Bfloat16Bits(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

template <typename V>
std::string Bytes(V v) {
  std::string s(sizeof(V), '\0');
  std::memcpy(s.data(), &v, sizeof(V));
  return s;
}

}  // namespace

bool IsFloatType(int32_t dtype) {
  return dtype == T::FLOAT || dtype == T::FLOAT16 || dtype == T::BFLOAT16 || dtype == T::DOUBLE;
}

// ---- Names ----

Names::Names(const onnx::GraphProto& g) {
  for (const auto& v : g.input()) values_.insert(v.name());
  for (const auto& v : g.output()) values_.insert(v.name());
  for (const auto& t : g.initializer()) values_.insert(t.name());
  for (const auto& n : g.node()) {
    nodes_.insert(n.name());
    for (const auto& o : n.output()) values_.insert(o);
  }
}

std::string Names::Fresh(const std::string& base, std::unordered_set<std::string>* used) {
  std::string name = base;
  for (int i = 1; used->count(name); ++i) name = base + "_" + std::to_string(i);
  used->insert(name);
  return name;
}

// ---- Facts / NodeView ----

int64_t Facts::Dim(int64_t axis) const {
  if (!rank_known) return -1;
  const auto r = static_cast<int64_t>(dims.size());
  if (axis < 0) axis += r;
  return axis >= 0 && axis < r ? dims[axis] : -1;
}

NodeView::NodeView(const Model& m, const Node& n, bool force, SharedState* state)
    : m_(m), n_(n), force_(force), state_(state) {}

bool NodeView::Has(size_t i) const {
  return i < n_.inputs.size() && n_.inputs[i] >= 0;
}

std::string NodeView::In(size_t i) const {
  return Has(i) ? m_.graph.values[n_.inputs[i]].name : "";
}

std::string NodeView::Out(size_t i) const {
  return i < n_.outputs.size() && n_.outputs[i] >= 0 ? m_.graph.values[n_.outputs[i]].name : "";
}

bool NodeView::Used(size_t i) const {
  if (i >= n_.outputs.size() || n_.outputs[i] < 0) return false;
  const Value& v = m_.graph.values[n_.outputs[i]];
  return v.is_graph_output || !v.consumers.empty();
}

Facts NodeView::Of(const std::string& value) const {
  Facts f;
  const int v = m_.graph.FindValue(value);
  if (v < 0) return f;
  const Value& val = m_.graph.values[v];
  f.dtype = val.info.dtype;
  f.rank_known = val.info.shape.rank_known;
  for (const auto& d : val.info.shape.dims) f.dims.push_back(d.known() ? d.value : -1);
  f.constant = val.initializer >= 0;
  return f;
}

const onnx::AttributeProto* NodeView::Attr(const std::string& name) const {
  for (const auto& a : n_.proto->attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t NodeView::IntAttr(const std::string& name, int64_t fallback) const {
  const auto* a = Attr(name);
  return a ? a->i() : fallback;
}

float NodeView::FloatAttr(const std::string& name, float fallback) const {
  const auto* a = Attr(name);
  return a ? a->f() : fallback;
}

std::vector<int64_t> NodeView::IntsAttr(const std::string& name) const {
  const auto* a = Attr(name);
  if (!a) return {};
  return {a->ints().begin(), a->ints().end()};
}

int32_t NodeView::FloatType(const std::vector<size_t>& inputs) const {
  for (size_t i : inputs) {
    const int32_t t = InFacts(i).dtype;
    if (IsFloatType(t)) return t;
  }
  if (!force_) return 0;
  std::map<int32_t, int> counts;
  for (const auto& init : m_.graph.initializers)
    if (IsFloatType(init.dtype)) counts[init.dtype]++;
  int32_t best = T::FLOAT;
  int most = 0;
  for (const auto& [t, c] : counts) {
    if (c > most) best = t, most = c;
  }
  return best;
}

std::string NodeView::Label() const {
  const std::string domain = n_.domain.empty() ? "ai.onnx" : n_.domain;
  return "node '" + n_.name + "' (" + domain + "." + n_.op_type + ")";
}

Status NodeView::Unsupported(const std::string& what, const std::string& remedy) const {
  return NotImplemented(Label() + ": " + what + "; " + remedy);
}

Status NodeView::Invalid(const std::string& what) const {
  return InvalidArgument(Label() + ": " + what);
}

// ---- Emitter ----

Emitter::Emitter(const std::string& prefix, int64_t opset, int32_t dtype, Names* names)
    : prefix_(prefix), opset_(opset), dtype_(dtype), names_(names) {}

std::vector<std::string> Emitter::Node(const std::string& op,
                                       const std::vector<std::string>& inputs,
                                       const std::string& tag, size_t n_outputs,
                                       std::vector<onnx::AttributeProto> attrs,
                                       const std::vector<std::string>& outs) {
  onnx::NodeProto n;
  n.set_name(names_->FreshNode(prefix_ + "/" + tag));
  n.set_op_type(op);
  for (const auto& in : inputs) n.add_input(in);
  std::vector<std::string> names;
  for (size_t i = 0; i < n_outputs; ++i) {
    std::string out = i < outs.size() ? outs[i] : "";
    if (out.empty())
      out = names_->FreshValue(prefix_ + "/" +
                               (n_outputs == 1 ? tag : tag + "_" + std::to_string(i)));
    n.add_output(out);
    names.push_back(out);
  }
  for (auto& a : attrs) *n.add_attribute() = std::move(a);
  nodes_.push_back(std::move(n));
  return names;
}

std::string Emitter::ScalarOf(const std::string& tag, int32_t dtype, double value) {
  T t;
  t.set_name(names_->FreshValue(prefix_ + "/" + tag));
  t.set_data_type(dtype);
  switch (dtype) {
    case T::FLOAT:
      t.set_raw_data(Bytes(static_cast<float>(value)));
      break;
    case T::DOUBLE:
      t.set_raw_data(Bytes(value));
      break;
    case T::FLOAT16:
      t.set_raw_data(Bytes(HalfBits(static_cast<float>(value))));
      break;
    case T::BFLOAT16:
      t.set_raw_data(Bytes(Bfloat16Bits(static_cast<float>(value))));
      break;
    case T::INT32:
      t.set_raw_data(Bytes(static_cast<int32_t>(value)));
      break;
    case T::INT64:
      t.set_raw_data(Bytes(static_cast<int64_t>(value)));
      break;
    case T::BOOL:
      t.set_raw_data(Bytes(static_cast<uint8_t>(value != 0)));
      break;
    case T::INT8:
      t.set_raw_data(Bytes(static_cast<int8_t>(value)));
      break;
    case T::UINT8:
      t.set_raw_data(Bytes(static_cast<uint8_t>(value)));
      break;
    default:  // other integer types: int64 bytes would be wrong, write through int32_data
      t.add_int32_data(static_cast<int32_t>(value));
      break;
  }
  const std::string name = t.name();
  initializers_.push_back(std::move(t));
  return name;
}

std::string Emitter::Int64s(const std::string& tag, const std::vector<int64_t>& values) {
  T t;
  t.set_name(names_->FreshValue(prefix_ + "/" + tag));
  t.set_data_type(T::INT64);
  t.add_dims(static_cast<int64_t>(values.size()));
  std::string raw(values.size() * sizeof(int64_t), '\0');
  if (!values.empty()) std::memcpy(raw.data(), values.data(), raw.size());
  t.set_raw_data(raw);
  const std::string name = t.name();
  initializers_.push_back(std::move(t));
  return name;
}

std::string Emitter::Unsqueeze(const std::string& x, const std::vector<int64_t>& axes,
                               const std::string& tag, const std::string& out) {
  if (opset_ >= 13) return Op("Unsqueeze", {x, Int64s(tag + "_axes", axes)}, tag, {}, out);
  return Op("Unsqueeze", {x}, tag, {IntsAttribute("axes", axes)}, out);
}

std::string Emitter::Reduce(const std::string& op, const std::string& x,
                            const std::vector<int64_t>& axes, bool keepdims, const std::string& tag,
                            const std::string& out) {
  // ReduceSum takes axes as an input from 13, the other reductions from 18.
  const bool axes_input = op == "ReduceSum" ? opset_ >= 13 : opset_ >= 18;
  std::vector<onnx::AttributeProto> attrs = {IntAttribute("keepdims", keepdims ? 1 : 0)};
  if (axes_input) return Op(op, {x, Int64s(tag + "_axes", axes)}, tag, std::move(attrs), out);
  attrs.push_back(IntsAttribute("axes", axes));
  return Op(op, {x}, tag, std::move(attrs), out);
}

std::vector<std::string> Emitter::Split(const std::string& x, int64_t axis,
                                        const std::vector<int64_t>& sizes, size_t parts,
                                        const std::string& tag) {
  std::vector<onnx::AttributeProto> attrs = {IntAttribute("axis", axis)};
  std::vector<std::string> inputs = {x};
  if (!sizes.empty()) {
    if (opset_ >= 13) {
      inputs.push_back(Int64s(tag + "_sizes", sizes));
    } else {
      attrs.push_back(IntsAttribute("split", sizes));
    }
  } else if (opset_ >= 18) {
    attrs.push_back(IntAttribute("num_outputs", static_cast<int64_t>(parts)));
  }
  return Node("Split", inputs, tag, parts, std::move(attrs));
}

std::string Emitter::Reshape(const std::string& x, const std::vector<int64_t>& shape,
                             const std::string& tag, const std::string& out) {
  return Op("Reshape", {x, Int64s(tag + "_shape", shape)}, tag, {}, out);
}

std::string Emitter::Transpose(const std::string& x, const std::vector<int64_t>& perm,
                               const std::string& tag, const std::string& out) {
  return Op("Transpose", {x}, tag, {IntsAttribute("perm", perm)}, out);
}

std::string Emitter::Cast(const std::string& x, int32_t to, const std::string& tag,
                          const std::string& out) {
  return Op("Cast", {x}, tag, {IntAttribute("to", to)}, out);
}

std::string Emitter::DimOf(const std::string& x, int64_t axis, bool scalar,
                           const std::string& tag) {
  auto it = shapes_.find(x);
  if (it == shapes_.end()) it = shapes_.emplace(x, Op("Shape", {x}, tag + "_shape")).first;
  const std::string index = scalar ? ScalarOf(tag + "_axis", T::INT64, static_cast<double>(axis))
                                   : Int64s(tag + "_axis", {axis});
  return Op("Gather", {it->second, index}, tag, {IntAttribute("axis", 0)});
}

void Emitter::LayerNorm(const std::string& x, const std::string& gamma, const std::string& beta,
                        float epsilon, const std::string& out, const std::string& mean_out,
                        const std::string& inv_std_out) {
  if (opset_ >= 17) {
    std::vector<std::string> inputs = {x, gamma};
    if (!beta.empty()) inputs.push_back(beta);
    const size_t n = !inv_std_out.empty() ? 3 : !mean_out.empty() ? 2 : 1;
    std::vector<std::string> outs = {out, mean_out, inv_std_out};
    outs.resize(n);
    // An unwanted Mean (when only InvStdDev is asked for) gets a fresh name nothing reads.
    Node("LayerNormalization", inputs, "layer_norm", n,
         {IntAttribute("axis", -1), FloatAttribute("epsilon", epsilon)}, outs);
    return;
  }
  // ReduceMean / Sub / Mul / ReduceMean / Add / Sqrt / Div, in float for 16-bit types.
  const bool narrow = dtype_ == T::FLOAT16 || dtype_ == T::BFLOAT16;
  const int32_t ct = narrow ? T::FLOAT : dtype_;
  const std::string xf = narrow ? Cast(x, T::FLOAT, "ln_cast") : x;
  const bool float_stats = ct == T::FLOAT;
  const std::string mean =
      Reduce("ReduceMean", xf, {-1}, true, "ln_mean", float_stats ? mean_out : "");
  const std::string d = Op("Sub", {xf, mean}, "ln_centered");
  const std::string var =
      Reduce("ReduceMean", Op("Mul", {d, d}, "ln_square"), {-1}, true, "ln_variance");
  const std::string sd = Op(
      "Sqrt", {Op("Add", {var, ScalarOf("ln_epsilon", ct, epsilon)}, "ln_variance_eps")}, "ln_std");
  if (!mean_out.empty() && !float_stats) Cast(mean, T::FLOAT, "ln_mean_float", mean_out);
  if (!inv_std_out.empty()) {
    const std::string inv = Op("Div", {ScalarOf("ln_one", ct, 1.0), sd}, "ln_inv_std", {},
                               float_stats ? inv_std_out : "");
    if (!float_stats) Cast(inv, T::FLOAT, "ln_inv_std_float", inv_std_out);
  }
  std::string y = Op("Div", {d, sd}, "ln_normalized");
  if (narrow) y = Cast(y, dtype_, "ln_cast_back");
  if (beta.empty()) {
    Op("Mul", {y, gamma}, "ln_scaled", {}, out);
    return;
  }
  Op("Add", {Op("Mul", {y, gamma}, "ln_scaled"), beta}, "ln_shifted", {}, out);
}

void Emitter::RmsNorm(const std::string& x, const std::string& gamma, float epsilon,
                      const std::string& out, const std::string& inv_std_out) {
  const bool narrow = dtype_ == T::FLOAT16 || dtype_ == T::BFLOAT16;
  const int32_t ct = narrow ? T::FLOAT : dtype_;
  const std::string xf = narrow ? Cast(x, T::FLOAT, "rms_cast") : x;
  const std::string mean_square =
      Reduce("ReduceMean", Op("Mul", {xf, xf}, "rms_square"), {-1}, true, "rms_mean_square");
  const std::string rms = Op(
      "Sqrt", {Op("Add", {mean_square, ScalarOf("rms_epsilon", ct, epsilon)}, "rms_eps")}, "rms");
  const std::string inv = Op("Div", {ScalarOf("rms_one", ct, 1.0), rms}, "rms_inv", {},
                             !inv_std_out.empty() && ct == T::FLOAT ? inv_std_out : "");
  if (!inv_std_out.empty() && ct != T::FLOAT) Cast(inv, T::FLOAT, "rms_inv_float", inv_std_out);
  std::string y = Op("Mul", {xf, inv}, "rms_normalized");
  if (narrow) y = Cast(y, dtype_, "rms_cast_back");
  Op("Mul", {y, gamma}, "rms_scaled", {}, out);
}

}  // namespace ortc::graph::contrib
