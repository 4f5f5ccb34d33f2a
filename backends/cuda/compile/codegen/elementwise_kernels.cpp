// Elementwise kernels: one grid-stride loop per fused DAG of elementwise ops (math, activations,
// comparisons, logic, bitwise ops, IsNaN/IsInf, Where, Cast), numpy broadcasting and NCHW /
// channels-last storage through strides baked into the source.
#include <map>
#include <set>
#include <sstream>

#include "base/element_types.h"

#include "cuda/compile/codegen/emitters.h"
#include "cuda/compile/codegen/kernel_text.h"

namespace ortc::backends::cuda::codegen {
namespace {

using onnx::TensorProto;

// How an op computes: F (float compute for every float type), I (int32/int64), B (bool).
enum class Kind { F, I32, I64, B };

Kind KindOf(int32_t dtype) {
  if (IsFloatType(dtype)) return Kind::F;
  if (dtype == TensorProto::INT32 || dtype == TensorProto::INT8 || dtype == TensorProto::UINT8)
    return Kind::I32;
  if (dtype == TensorProto::INT64) return Kind::I64;
  return Kind::B;
}

const std::set<std::string>& FloatOps() {
  static const std::set<std::string> s = {
      "Relu",  "LeakyRelu", "Sigmoid",    "Tanh",     "HardSigmoid", "HardSwish", "Gelu",
      "Elu",   "Selu",      "Softplus",   "Softsign", "PRelu",       "Erf",       "Exp",
      "Log",   "Sqrt",      "Reciprocal", "Sin",      "Cos",         "Floor",     "Ceil",
      "Round", "Clip",      "Pow",        "Mish"};
  return s;
}
// Computed in the inputs' own kind: float (fp16/bf16 in fp32), int32 or int64.
const std::set<std::string>& ArithmeticOps() {
  static const std::set<std::string> s = {"Add", "Sub", "Mul", "Div",  "Abs",
                                          "Neg", "Min", "Max", "Sign", "Mod"};
  return s;
}
// On the bits of integers of one type (int8, uint8, int32, int64; BitShift unsigned only).
const std::set<std::string>& BitwiseOps() {
  static const std::set<std::string> s = {"BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot",
                                          "BitShift"};
  return s;
}
// Float in, bool out.
const std::set<std::string>& FloatTests() {
  static const std::set<std::string> s = {"IsNaN", "IsInf"};
  return s;
}
const std::set<std::string>& CompareOps() {
  static const std::set<std::string> s = {"Equal", "Less", "Greater", "LessOrEqual",
                                          "GreaterOrEqual"};
  return s;
}
const std::set<std::string>& OtherOps() {
  static const std::set<std::string> s = {"Where", "Not",  "And",      "Or",
                                          "Xor",   "Cast", "Identity", "Dropout"};
  return s;
}

// Number of data inputs the expression reads (the rest are bounds, ratios...).
size_t DataInputs(const OpDesc& op) {
  const std::string& t = op.op_type;
  if (t == "Clip" || t == "Dropout" || t == "Identity" || t == "Cast" || t == "Not" ||
      t == "BitwiseNot" || FloatTests().count(t))
    return 1;
  if (t == "Where") return 3;
  if (t == "Min" || t == "Max") return op.inputs.size();
  if (op.inputs.size() >= 2 && (FloatOps().count(t) == 0 || t == "PRelu" || t == "Pow")) return 2;
  return 1;
}

// The expression of one op over its argument expressions (already in compute types).
std::string Expression(const OpDesc& op, const std::vector<std::string>& a,
                       const std::vector<Kind>& k) {
  const std::string& t = op.op_type;
  const std::string x = a.empty() ? "" : a[0];
  if (t == "Relu") return "(" + x + " > 0.f ? " + x + " : 0.f)";
  if (t == "LeakyRelu")
    return "(" + x + " >= 0.f ? " + x + " : " + FloatLiteral(FloatAttr(op, "alpha", 0.01f)) +
           " * " + x + ")";
  if (t == "Sigmoid") return "ortc_sigmoid(" + x + ")";
  if (t == "Tanh") return "tanhf(" + x + ")";
  if (t == "HardSigmoid")
    return "fmaxf(0.f, fminf(1.f, " + FloatLiteral(FloatAttr(op, "alpha", 0.2f)) + " * " + x +
           " + " + FloatLiteral(FloatAttr(op, "beta", 0.5f)) + "))";
  if (t == "HardSwish") return "(" + x + " * fmaxf(0.f, fminf(1.f, " + x + " / 6.f + 0.5f)))";
  if (t == "Gelu") {
    if (StringAttr(op, "approximate", "none") == "tanh")
      return "(0.5f * " + x + " * (1.f + tanhf(0.7978845608028654f * (" + x + " + 0.044715f * " +
             x + " * " + x + " * " + x + "))))";
    return "(0.5f * " + x + " * (1.f + erff(" + x + " * 0.7071067811865476f)))";
  }
  if (t == "Elu")
    return "(" + x + " >= 0.f ? " + x + " : " + FloatLiteral(FloatAttr(op, "alpha", 1.f)) +
           " * expm1f(" + x + "))";
  if (t == "Selu")
    return "(" + FloatLiteral(FloatAttr(op, "gamma", 1.05070102214813232421875f)) + " * (" + x +
           " > 0.f ? " + x + " : " +
           FloatLiteral(FloatAttr(op, "alpha", 1.67326319217681884765625f)) + " * expm1f(" + x +
           ")))";
  if (t == "Softplus") return "ortc_softplus(" + x + ")";
  if (t == "Softsign") return "(" + x + " / (1.f + fabsf(" + x + ")))";
  if (t == "PRelu") return "(" + x + " < 0.f ? " + a[1] + " * " + x + " : " + x + ")";
  if (t == "Mish") return "(" + x + " * tanhf(ortc_softplus(" + x + ")))";
  static const std::map<std::string, std::string>
      unary = {{"Erf", "erff"},   {"Exp", "expf"}, {"Log", "logf"},     {"Sqrt", "sqrtf"},
               {"Sin", "sinf"},   {"Cos", "cosf"}, {"Floor", "floorf"}, {"Ceil", "ceilf"},
               {"Round", "rintf"}};  // rintf: the default rounding mode is to nearest, ties to even
  if (auto it = unary.find(t); it != unary.end()) return it->second + "(" + x + ")";
  if (t == "Reciprocal") return "(1.f / " + x + ")";
  if (t == "Pow") return "powf(" + x + ", (float)" + a[1] + ")";
  if (t == "Clip") {
    std::string r = x;
    if (a.size() > 1 && !a[1].empty()) r = "(" + r + " < " + a[1] + " ? " + a[1] + " : " + r + ")";
    if (a.size() > 2 && !a[2].empty()) r = "(" + r + " > " + a[2] + " ? " + a[2] + " : " + r + ")";
    return r;
  }
  // Integer Add/Sub/Mul/Neg/Abs wrap (prelude helpers); Div and Mod by zero give 0.
  const bool f = !k.empty() && k[0] == Kind::F;
  if (t == "Add") return f ? "(" + x + " + " + a[1] + ")" : "ortc_wadd(" + x + ", " + a[1] + ")";
  if (t == "Sub") return f ? "(" + x + " - " + a[1] + ")" : "ortc_wsub(" + x + ", " + a[1] + ")";
  if (t == "Mul") return f ? "(" + x + " * " + a[1] + ")" : "ortc_wmul(" + x + ", " + a[1] + ")";
  if (t == "Div") return f ? "(" + x + " / " + a[1] + ")" : "ortc_idiv(" + x + ", " + a[1] + ")";
  if (t == "Mod") {
    const bool c_fmod = IntAttr(op, "fmod", 0) != 0;
    if (f) return std::string(c_fmod ? "fmodf(" : "ortc_fmod0(") + x + ", " + a[1] + ")";
    return std::string(c_fmod ? "ortc_ifmod(" : "ortc_imod(") + x + ", " + a[1] + ")";
  }
  if (t == "Abs")
    return f ? "fabsf(" + x + ")" : "(" + x + " < 0 ? ortc_wneg(" + x + ") : " + x + ")";
  if (t == "Neg") return f ? "(-" + x + ")" : "ortc_wneg(" + x + ")";
  if (t == "Sign")
    return f ? "ortc_sign(" + x + ")" : "(" + x + " > 0 ? 1 : (" + x + " < 0 ? -1 : 0))";
  if (t == "Min" || t == "Max") {
    std::string r = x;
    for (size_t i = 1; i < a.size(); ++i) {
      if (f)
        r = std::string(t == "Min" ? "ortc_min(" : "ortc_max(") + r + ", " + a[i] + ")";
      else
        r = "(" + r + (t == "Min" ? " < " : " > ") + a[i] + " ? " + r + " : " + a[i] + ")";
    }
    return r;
  }
  static const std::map<std::string, std::string> cmp = {{"Equal", "=="},
                                                         {"Less", "<"},
                                                         {"Greater", ">"},
                                                         {"LessOrEqual", "<="},
                                                         {"GreaterOrEqual", ">="}};
  if (auto it = cmp.find(t); it != cmp.end()) return "(" + x + " " + it->second + " " + a[1] + ")";
  if (t == "Where") return "(" + x + " ? " + a[1] + " : " + a[2] + ")";
  if (t == "Not") return "(!" + x + ")";
  if (t == "And") return "(" + x + " && " + a[1] + ")";
  if (t == "Or") return "(" + x + " || " + a[1] + ")";
  if (t == "Xor") return "(" + x + " != " + a[1] + ")";
  if (t == "IsNaN") return "ortc_isnan(" + x + ")";
  if (t == "IsInf") {
    const bool pos = IntAttr(op, "detect_positive", 1) != 0;
    const bool neg = IntAttr(op, "detect_negative", 1) != 0;
    if (pos && neg) return "ortc_isinf(" + x + ")";
    if (!pos && !neg) return "false";
    return "(ortc_isinf(" + x + ") && " + x + (pos ? " > 0.f)" : " < 0.f)");
  }
  // Bitwise ops on the compute type (8-bit integers widened to int32): the store keeps the
  // element's own bits, which are those of the narrow operation.
  if (t == "BitwiseAnd") return "(" + x + " & " + a[1] + ")";
  if (t == "BitwiseOr") return "(" + x + " | " + a[1] + ")";
  if (t == "BitwiseXor") return "(" + x + " ^ " + a[1] + ")";
  if (t == "BitwiseNot") return "(~" + x + ")";
  if (t == "BitShift") {
    // Unsigned operands only (checked), so the value converts to 64 bits unchanged.
    const std::string fn = StringAttr(op, "direction", "") == "LEFT" ? "ortc_shl" : "ortc_shr";
    return "((" + ComputeCType(op.outputs[0].dtype) + ")" + fn + "((ortc_u64)" + x +
           ", (ortc_u64)" + a[1] + "))";
  }
  if (t == "Cast") {
    const int32_t to = op.outputs[0].dtype;
    const Kind from = k[0];
    if (to == TensorProto::BOOL)
      return from == Kind::B ? x : from == Kind::F ? "(" + x + " != 0.f)" : "(" + x + " != 0)";
    if (IsFloatType(to)) {
      // A cast to fp16/bf16 rounds even when the value is only used inside the kernel.
      const std::string v = from == Kind::B ? "(" + x + " ? 1.f : 0.f)" : "(float)" + x;
      if (to == TensorProto::FLOAT16) return "ortc_h2f(ortc_f2h(" + v + "))";
      if (to == TensorProto::BFLOAT16) return "ortc_bf2f(ortc_f2bf(" + v + "))";
      return "(" + v + ")";
    }
    // From a float, through int64 as the CPU runtime converts (NaN 0, saturated, then wrapped).
    if (from == Kind::F) return "((" + ComputeCType(to) + ")ortc_f2i64(" + x + "))";
    return "((" + ComputeCType(to) + ")" + x + ")";
  }
  return x;  // Identity, Dropout (inference)
}

// Why an op of the group cannot be generated, checking dtypes per op class.
std::string CheckOp(const OpDesc& op) {
  const std::string& t = op.op_type;
  if (op.outputs.empty() || !IsStorageType(op.outputs[0].dtype))
    return t + ": output type " +
           (op.outputs.empty() ? "missing" : DtypeName(op.outputs[0].dtype)) + " is not supported";
  const size_t n = DataInputs(op);
  if (op.inputs.size() < n) return t + ": expected " + std::to_string(n) + " inputs";
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    if (op.inputs[i].dtype == 0) {
      if (i < n) return t + ": input " + std::to_string(i) + " is missing";
      continue;
    }
    if (!IsStorageType(op.inputs[i].dtype))
      return t + ": element type " + DtypeName(op.inputs[i].dtype) + " is not supported";
  }
  const Kind k0 = KindOf(op.inputs[0].dtype);
  if (FloatOps().count(t)) {
    if (k0 != Kind::F) return t + " on " + DtypeName(op.inputs[0].dtype) + " is not supported";
    if (t == "Pow" && KindOf(op.inputs[1].dtype) == Kind::B) return "Pow with a bool exponent";
    if (t == "Clip" && op.since_version >= 11) {
      for (size_t i = 1; i < op.inputs.size() && i < 3; ++i) {
        if (op.inputs[i].dtype == 0) continue;
        if (op.inputs[i].elements() != 1) return "Clip bounds must be scalars";
      }
    }
  }
  const int32_t d0 = op.inputs[0].dtype;
  const bool small_int = d0 == TensorProto::INT8 || d0 == TensorProto::UINT8;
  // 8-bit arithmetic would compute in int32 and wrap only at the store, which Div, Mod, Min
  // and Max do not: refused rather than half right.
  if (ArithmeticOps().count(t) && (k0 == Kind::B || small_int))
    return t + " on " + DtypeName(d0) + " is not supported";
  if (FloatTests().count(t) && k0 != Kind::F)
    return t + " on " + DtypeName(d0) + " is not supported (float inputs only)";
  if (BitwiseOps().count(t)) {
    if (k0 == Kind::F || k0 == Kind::B)
      return t + " on " + DtypeName(d0) + " is not supported (integer inputs only)";
    if (t == "BitShift" && d0 != TensorProto::UINT8)
      return "BitShift on " + DtypeName(d0) +
             " is not supported (unsigned integers only, and UINT8 is the one kernels store)";
    if (t == "BitShift" && StringAttr(op, "direction", "") != "LEFT" &&
        StringAttr(op, "direction", "") != "RIGHT")
      return "BitShift needs direction LEFT or RIGHT";
  }
  if ((t == "Not" || t == "And" || t == "Or" || t == "Xor") &&
      (k0 != Kind::B || (n > 1 && KindOf(op.inputs[1].dtype) != Kind::B)))
    return t + " needs bool inputs";
  if (t == "Where") {
    if (KindOf(d0) != Kind::B) return "Where needs a bool condition";
    if (op.inputs[1].dtype != op.inputs[2].dtype || op.outputs[0].dtype != op.inputs[1].dtype)
      return "Where with branches of different element types";
  }
  if (CompareOps().count(t) || ArithmeticOps().count(t) || BitwiseOps().count(t)) {
    for (size_t i = 1; i < n; ++i)
      if (op.inputs[i].dtype != d0) return t + " on mixed element types";
  }
  // The result is computed in the inputs' type (a bool for tests and comparisons); a declared
  // output of another type would be a silent conversion.
  const bool to_bool = CompareOps().count(t) || FloatTests().count(t) || t == "Not" || t == "And" ||
                       t == "Or" || t == "Xor";
  if (to_bool && op.outputs[0].dtype != TensorProto::BOOL)
    return t + ": output type " + DtypeName(op.outputs[0].dtype) + " instead of BOOL";
  if ((ArithmeticOps().count(t) || BitwiseOps().count(t)) && op.outputs[0].dtype != d0)
    return t + ": output type " + DtypeName(op.outputs[0].dtype) + " differs from the inputs'";
  if (t == "Dropout") {
    if (op.outputs.size() > 1 && op.outputs[1].dtype != 0)
      return "Dropout's mask output is not supported (inference only)";
    if (op.inputs.size() > 2 && op.inputs[2].dtype != 0) {
      auto v = ConstantValues(op, 2);
      if (!v || v->empty() || (*v)[0] != 0)
        return "Dropout in training mode is not supported (training_mode must be a constant "
               "false)";
    }
  }
  if (t == "Cast" && !IsStorageType(static_cast<int32_t>(IntAttr(op, "to", 0))))
    return "Cast to " + DtypeName(static_cast<int32_t>(IntAttr(op, "to", 0))) + " is not supported";
  return "";
}

// Arguments of op input i that are compile-time constants baked as literals (Clip bounds).
bool BakedArgument(const OpDesc& op, size_t i) {
  return op.op_type == "Clip" && i >= 1 && ConstantValues(op, i).has_value();
}

// Broadcast strides of `dims` against the iteration shape (right-aligned, size-1 dims stride 0);
// nullopt when it does not broadcast.
std::optional<std::vector<int64_t>> Strides(const std::vector<int64_t>& dims,
                                            const std::vector<int64_t>& shape) {
  if (dims.size() > shape.size()) return std::nullopt;
  std::vector<int64_t> strides(shape.size(), 0);
  int64_t s = 1;
  for (size_t k = 0; k < dims.size(); ++k) {
    const size_t d = dims.size() - 1 - k, o = shape.size() - 1 - k;
    if (dims[d] != shape[o] && dims[d] != 1) return std::nullopt;
    strides[o] = dims[d] == 1 ? 0 : s;
    s *= dims[d];
  }
  return strides;
}

// PRelu with a per-channel slope [C] on [N, C, ...] (older exporters): the slope applies to
// axis 1, not to the last axis as numpy broadcasting would align it.
std::vector<int64_t> EffectiveDims(const OpDesc& op, size_t i, const std::vector<int64_t>& dims) {
  if (op.op_type == "PRelu" && i == 1 && dims.size() == 1 && op.inputs[0].dims.size() > 2 &&
      dims[0] == op.inputs[0].dims[1] && dims[0] != op.inputs[0].dims.back()) {
    std::vector<int64_t> d(op.inputs[0].dims.size() - 1, 1);
    d[0] = dims[0];
    return d;
  }
  return dims;
}

}  // namespace

bool IsElementwiseOp(const std::string& t) {
  return FloatOps().count(t) || ArithmeticOps().count(t) || CompareOps().count(t) ||
         BitwiseOps().count(t) || FloatTests().count(t) || OtherOps().count(t);
}

std::string ElementwiseUnsupported(const OpDesc& op) {
  if (!IsElementwiseOp(op.op_type)) return "no CUDA kernel generator for " + op.op_type;
  return CheckOp(op);
}

Result<KernelSource> EmitFusedElementwise(const std::string& name, const FusedGroup& group) {
  if (group.ops.empty() || group.outputs.empty())
    return InvalidArgument("fused group " + name + " has no ops or no outputs");
  for (int o : group.outputs) {
    if (o < 0 || o >= static_cast<int>(group.ops.size()))
      return InvalidArgument(name + ": group output refers to op " + std::to_string(o));
  }
  for (const FusedOp& f : group.ops)
    if (f.op.outputs.empty()) return InvalidArgument(name + ": an op without outputs");
  // The iteration shape: every group output has it (logical dims).
  const std::vector<int64_t> shape = group.ops[group.outputs[0]].op.outputs[0].dims;
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return InvalidArgument(name + ": dynamic dimension");
    n *= d;
  }
  for (int o : group.outputs) {
    if (group.ops[o].op.outputs[0].dims != shape)
      return NotImplemented(name + ": fused outputs of different shapes");
  }
  const size_t rank = shape.size();
  auto input_layout = [&](size_t i) {
    return i < group.input_layouts.size() ? group.input_layouts[i] : Layout::kNchw;
  };
  auto output_layout = [&](size_t o) {
    return o < group.output_layouts.size() ? group.output_layouts[o] : Layout::kNchw;
  };
  for (size_t i = 0; i < group.inputs.size(); ++i) {
    if (input_layout(i) != Layout::kNchw && group.inputs[i].dims.size() < 3)
      return InvalidArgument(name + ": channels-last input " + std::to_string(i) + " of rank " +
                             std::to_string(group.inputs[i].dims.size()));
  }
  for (size_t o = 0; o < group.outputs.size(); ++o) {
    if (output_layout(o) != Layout::kNchw && rank < 3)
      return InvalidArgument(name + ": channels-last output of rank " + std::to_string(rank));
  }
  // Threads walk output 0 in its storage order: iteration axis j is logical axis order[j], and
  // coordinate c<j> runs over walk[j]. Every other tensor is addressed through its strides per
  // logical axis, so a tensor stored in another layout (or broadcast) costs only the arithmetic.
  const std::vector<size_t> order = StorageOrder(rank, output_layout(0));
  std::vector<int64_t> walk;
  for (size_t a : order) walk.push_back(shape[a]);
  const std::vector<int64_t> dense = StorageStrides(walk, Layout::kNchw);
  std::set<size_t> coords;  // the walk coordinates some tensor's offset uses
  // The offset expression of an element whose per-logical-axis strides are `strides`.
  auto offset_of = [&](const std::vector<int64_t>& strides) {
    bool in_order = true, zero = true;
    std::string offset;
    for (size_t j = 0; j < rank; ++j) {
      const int64_t st = strides[order[j]];
      if (walk[j] > 1 && st != dense[j]) in_order = false;
      if (walk[j] == 1 || st == 0) continue;
      zero = false;
      if (!offset.empty()) offset += " + ";
      offset += "c" + std::to_string(j) + " * " + IntLiteral(st);
    }
    if (in_order) return std::string("i");
    if (zero) return std::string("0");
    for (size_t j = 0; j < rank; ++j) {
      if (walk[j] > 1 && strides[order[j]] != 0) coords.insert(j);
    }
    return offset;
  };

  std::map<std::string, std::string> loads;  // (input, offset expression) -> variable
  std::vector<std::set<std::string>> input_offsets(group.inputs.size());  // every load's offset
  std::ostringstream load_code;
  auto load = [&](int input, const std::vector<int64_t>& dims) -> Result<std::string> {
    if (input < 0 || input >= static_cast<int>(group.inputs.size()))
      return InvalidArgument(name + ": argument refers to group input " + std::to_string(input));
    const TensorDesc& t = group.inputs[input];
    auto broadcast = Strides(dims, shape);
    if (!broadcast)
      return InvalidArgument(name + ": input " + std::to_string(input) +
                             " does not broadcast to the output shape");
    // Strides per logical axis of the iteration shape: the input's own storage strides,
    // right-aligned, and 0 along broadcast axes. EffectiveDims may reshape an input ([C] ->
    // [C, 1, 1]): its storage is then that of the dims it was given.
    std::vector<int64_t> strides = *broadcast;
    const InputView* view =
        input < static_cast<int>(group.input_views.size()) && group.input_views[input]
            ? &*group.input_views[input]
            : nullptr;
    if (view) {
      // Read in place: the view's own strides (dims as given, so not reshaped by EffectiveDims).
      if (dims != t.dims || view->strides.size() != dims.size() ||
          input_layout(input) != Layout::kNchw)
        return InvalidArgument(name + ": viewed input " + std::to_string(input) +
                               " read with other dims or layout");
      for (size_t k = 0; k < dims.size(); ++k) {
        const size_t o = rank - dims.size() + k;
        strides[o] = dims[k] == 1 ? 0 : view->strides[k];
      }
    } else if (input_layout(input) != Layout::kNchw) {
      if (dims != t.dims)
        return InvalidArgument(name + ": channels-last input " + std::to_string(input) +
                               " read with other dims");
      const auto stored = StorageStrides(dims, input_layout(input));
      for (size_t k = 0; k < dims.size(); ++k) {
        const size_t o = rank - dims.size() + k;
        strides[o] = dims[k] == 1 ? 0 : stored[k];
      }
    }
    std::string offset = offset_of(strides);
    // A view's strides may equal the dense ones ("i"); its offset places it in the buffer.
    if (view && view->offset != 0) offset = IntLiteral(view->offset) + " + " + offset;
    input_offsets[input].insert(view ? "view" : offset);
    const std::string key = std::to_string(input) + ":" + offset;
    if (auto it = loads.find(key); it != loads.end()) return it->second;
    const std::string var = "x" + std::to_string(loads.size());
    load_code << "    const " << ComputeCType(t.dtype) << " " << var << " = "
              << LoadExpr(t.dtype, "in" + std::to_string(input) + "[" + offset + "]") << ";\n";
    loads[key] = var;
    return var;
  };

  std::ostringstream compute;
  std::vector<std::set<int>> reads(group.ops.size());  // the group inputs each op's value uses
  for (size_t j = 0; j < group.ops.size(); ++j) {
    const FusedOp& f = group.ops[j];
    for (int arg : f.args) {
      if (arg >= 0) reads[j].insert(arg);
      if (arg < 0 && -1 - arg < static_cast<int>(j))
        reads[j].insert(reads[-1 - arg].begin(), reads[-1 - arg].end());
    }
    if (std::string why = CheckOp(f.op); !why.empty()) return NotImplemented(why);
    if (f.args.size() != f.op.inputs.size())
      return InvalidArgument(name + ": op " + std::to_string(j) + " has " +
                             std::to_string(f.args.size()) + " arguments for " +
                             std::to_string(f.op.inputs.size()) + " inputs");
    std::vector<std::string> a;
    std::vector<Kind> k;
    for (size_t i = 0; i < f.op.inputs.size(); ++i) {
      const int32_t dtype = f.op.inputs[i].dtype;
      if (dtype == 0 || (i >= DataInputs(f.op) && f.op.op_type != "Clip")) {
        a.emplace_back();
        k.push_back(Kind::F);
        continue;
      }
      k.push_back(KindOf(dtype));
      if (BakedArgument(f.op, i)) {
        const auto values = ConstantValues(f.op, i);
        if (values->empty()) return InvalidArgument(name + ": empty Clip bound");
        a.push_back(FloatLiteral(static_cast<float>(values->at(0))));
        continue;
      }
      const int arg = f.args[i];
      if (arg < 0) {
        const int from = -1 - arg;
        if (from >= static_cast<int>(j))
          return InvalidArgument(name + ": op " + std::to_string(j) + " uses a later op");
        a.push_back("v" + std::to_string(from));
        continue;
      }
      if (arg >= static_cast<int>(group.inputs.size()))
        return InvalidArgument(name + ": argument refers to group input " + std::to_string(arg));
      auto var = load(arg, EffectiveDims(f.op, i, group.inputs[arg].dims));
      if (!var.ok()) return var.status();
      a.push_back(var.value());
    }
    if (f.op.op_type == "Clip" && f.op.since_version < 11) {
      a.resize(3);
      if (const auto* lo = FindAttribute(f.op, "min")) a[1] = FloatLiteral(lo->f());
      if (const auto* hi = FindAttribute(f.op, "max")) a[2] = FloatLiteral(hi->f());
    }
    const int32_t out = f.op.outputs[0].dtype;
    compute << "    const " << ComputeCType(out) << " v" << j << " = " << Expression(f.op, a, k)
            << ";\n";
  }

  std::ostringstream src;
  src << "extern \"C\" __global__ void " << name << "("
      << KernelParams(static_cast<int>(group.inputs.size()), static_cast<int>(group.outputs.size()))
      << ") {\n";
  for (size_t i = 0; i < group.inputs.size(); ++i) {
    if (group.inputs[i].dtype == 0) continue;
    src << "  const " << StorageCType(group.inputs[i].dtype) << "* __restrict__ in" << i
        << " = (const " << StorageCType(group.inputs[i].dtype) << "*)p" << i << ";\n";
  }
  for (size_t o = 0; o < group.outputs.size(); ++o) {
    const int32_t t = group.ops[group.outputs[o]].op.outputs[0].dtype;
    src << "  " << StorageCType(t) << "* __restrict__ out" << o << " = (" << StorageCType(t)
        << "*)p" << group.inputs.size() + o << ";\n";
  }
  src << "  for (ortc_i64 i = (ortc_i64)blockIdx.x * blockDim.x + threadIdx.x; i < "
      << IntLiteral(n) << "; i += (ortc_i64)gridDim.x * blockDim.x) {\n";
  std::ostringstream store;
  std::vector<std::pair<int, int>> same_index;
  for (size_t o = 0; o < group.outputs.size(); ++o) {
    const int32_t t = group.ops[group.outputs[o]].op.outputs[0].dtype;
    const std::string at = offset_of(StorageStrides(shape, output_layout(o)));
    // Input k may share output o's bytes when the thread writing element i of o has read
    // element i of k (o's value uses k: the load comes first) and no thread reads k elsewhere.
    for (int k : reads[group.outputs[o]]) {
      if (at == "i" && input_offsets[k] == std::set<std::string>{"i"} &&
          HeldElementBytes(group.inputs[k].dtype) == HeldElementBytes(t))
        same_index.emplace_back(k, static_cast<int>(o));
    }
    store << "    out" << o << "[" << at
          << "] = " << StoreExpr(t, "v" + std::to_string(group.outputs[o])) << ";\n";
  }
  if (!coords.empty()) {
    // Only the coordinates some offset uses, each straight from i; in 32 bits when the walk
    // fits (64-bit division is several times slower on the device).
    const bool narrow = n < (int64_t{1} << 31);
    const std::string type = narrow ? "unsigned" : "ortc_i64";
    src << "    const " << type << " iw = (" << type << ")i;\n";
    for (size_t j : coords) {
      const int64_t inner = dense[j];
      std::string c = inner == 1 ? "iw"
                                 : "iw / " + std::string(narrow ? "" : "(ortc_i64)") +
                                       std::to_string(inner) + (narrow ? "u" : "");
      if (j > 0)
        c = "(" + c + ") % " + (narrow ? std::to_string(walk[j]) + "u" : IntLiteral(walk[j]));
      src << "    const " << type << " c" << j << " = " << c << ";\n";
    }
  }
  src << load_code.str() << compute.str() << store.str();
  src << "  }\n}\n";

  KernelSource k;
  k.name = name;
  k.source = src.str();
  k.num_inputs = static_cast<int>(group.inputs.size());
  k.num_outputs = static_cast<int>(group.outputs.size());
  k.block = {kBlockSize, 1, 1};
  k.grid = {GridFor(n), 1, 1};
  k.same_index = std::move(same_index);
  return k;
}

}  // namespace ortc::backends::cuda::codegen
