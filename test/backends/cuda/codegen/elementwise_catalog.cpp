// Elementwise entries of the kernel catalog: every op the family claims, over odd sizes,
// broadcasting, scalars and each attribute variant, in float32/float16 (bfloat16 for a subset),
// int32/int64 and bool; plus fused groups. The ops and dtypes exporters' transformer graphs add
// (IsNaN/IsInf, Xor, Mod, bitwise ops, integer arithmetic at its limits, every Cast pair, masks
// built from integer ranges) are in AddExporterOps and AddExporterGroups.
#include <algorithm>
#include <cmath>
#include <limits>

#include "catalog.h"

namespace ortc::test::cuda {
namespace {

using onnx::TensorProto;
constexpr int32_t F = TensorProto::FLOAT, I32 = TensorProto::INT32, I64 = TensorProto::INT64,
                  B = TensorProto::BOOL, H = TensorProto::FLOAT16, BF = TensorProto::BFLOAT16;

CatalogEntry Entry(std::string name, cg::OpDesc op,
                   std::vector<std::pair<float, float>> ranges = {}) {
  CatalogEntry e;
  e.name = "ew_" + std::move(name);
  e.op = std::move(op);
  e.ranges = std::move(ranges);
  return e;
}

// Unary float op on [2, 3, 5] (and [1000] for a longer grid-stride loop).
cg::OpDesc Unary(const std::string& type, int version, std::vector<int64_t> dims,
                 std::vector<onnx::AttributeProto> attrs = {}) {
  return Op(type, version, {T(F, dims)}, {T(F, dims)}, std::move(attrs));
}
cg::OpDesc Binary(const std::string& type, int version, int32_t t, std::vector<int64_t> a,
                  std::vector<int64_t> b, std::vector<int64_t> out, int32_t out_type = 0) {
  return Op(type, version, {T(t, a), T(t, b)}, {T(out_type ? out_type : t, out)});
}

// Float entries in float32 and float16; `bf16` adds bfloat16.
void AddFloat(std::vector<CatalogEntry>& v, const CatalogEntry& e, bool bf16) {
  v.push_back(e);
  v.push_back(WithFloatType(e, H));
  if (bf16) v.push_back(WithFloatType(e, BF));
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kI32Min = -2147483648.0, kI32Max = 2147483647.0;
constexpr double kI64Min = -9223372036854775808.0;

CatalogEntry WithValues(CatalogEntry e, std::vector<std::vector<double>> values) {
  e.values = std::move(values);
  return e;
}

// Float values IsNaN, IsInf and casts must tell apart: NaN, both infinities, both zeros, a
// subnormal, finite values beyond fp16's range and fractions of both signs.
const std::vector<double>& Specials() {
  static const std::vector<double> v = {kNaN,  kInf, -kInf, 0.0,    -0.0, 1e-40, 1.5,
                                        -2.25, 3e38, -3e38, 65504., 7e4,  -kNaN, 0.5};
  return v;
}

std::string TypeTag(int32_t t) {
  switch (t) {
    case F:
      return "f32";
    case H:
      return "f16";
    case BF:
      return "bf16";
    case I32:
      return "i32";
    case I64:
      return "i64";
    default:
      return "bool";
  }
}

// Ops exporters write that the first catalog lacks, alone (each also sits in a fused group,
// AddExporterGroups).
void AddExporterOps(std::vector<CatalogEntry>& v) {
  const std::vector<int64_t> s = {2, 3, 5};
  constexpr int32_t U8 = TensorProto::UINT8, I8 = TensorProto::INT8;

  // IsNaN / IsInf on every float type, every detect_* combination.
  AddFloat(v, WithValues(Entry("IsNaN", Op("IsNaN", 20, {T(F, s)}, {T(B, s)})), {Specials()}),
           true);
  for (int pos = 0; pos < 2; ++pos)
    for (int neg = 0; neg < 2; ++neg) {
      auto op = Op("IsInf", 20, {T(F, s)}, {T(B, s)},
                   {AttrInt("detect_positive", pos), AttrInt("detect_negative", neg)});
      const std::string name = "IsInf_p" + std::to_string(pos) + "n" + std::to_string(neg);
      AddFloat(v, WithValues(Entry(name, op), {Specials()}), true);
    }
  AddFloat(v,
           WithValues(Entry("IsInf_default", Op("IsInf", 10, {T(F, s)}, {T(B, s)})), {Specials()}),
           true);

  // Every pair of operands (random bools may leave one side all false, where Xor is Or).
  v.push_back(WithValues(Entry("Xor_bcast", Binary("Xor", 7, B, {2, 1, 5}, {3, 1}, s)),
                         {{1, 0, 1, 1, 0, 0, 1, 0, 1, 1}, {1, 0, 1}}));

  // Mod: integers with both fmod values, zero and -1 divisors, the most negative dividend.
  const std::vector<double> divisors = {3, -3, 0, -1, 7, 1, -5, 2};
  for (int fmod = 0; fmod < 2; ++fmod) {
    const std::string tag = "_fmod" + std::to_string(fmod);
    for (int32_t t : {I32, I64}) {
      auto op = Op("Mod", 13, {T(t, {4, 1, 7}), T(t, {3, 7})}, {T(t, {4, 3, 7})},
                   {AttrInt("fmod", fmod)});
      v.push_back(Entry("Mod" + tag + "_" + TypeTag(t), op, {{-20, 20}, {-6, 6}}));
      const double min = t == I32 ? kI32Min : kI64Min;
      auto limits = Op("Mod", 13, {T(t, {16}), T(t, {16})}, {T(t, {16})}, {AttrInt("fmod", fmod)});
      v.push_back(
          WithValues(Entry("Mod_limits" + tag + "_" + TypeTag(t), limits),
                     {{min, -7, 7, 0, min, 13, -13, -1, min, 5, -5, 100, 9, -9, 2, -2}, divisors}));
    }
    // Floats: fmod = 1 is C's fmod; fmod = 0 (outside ONNX's float domain) as the CPU computes.
    auto op = Op("Mod", 13, {T(F, s), T(F, {5})}, {T(F, s)}, {AttrInt("fmod", fmod)});
    AddFloat(v, WithValues(Entry("Mod" + tag + "_f", op), {{}, {2.5, -1.5, 0, 0.75, -3}}), true);
  }

  // Bitwise ops on every integer storage type, on their bits.
  struct Bits {
    int32_t t;
    std::pair<float, float> range;
  };
  for (const Bits& b : std::vector<Bits>{
           {I32, {-2e6f, 2e6f}}, {I64, {-1e15f, 1e15f}}, {I8, {-128, 127}}, {U8, {0, 255}}}) {
    const std::string tag = b.t == I8 ? "i8" : b.t == U8 ? "u8" : TypeTag(b.t);
    for (const char* type : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"})
      v.push_back(Entry(std::string(type) + "_" + tag,
                        Binary(type, 18, b.t, {4, 1, 7}, {3, 7}, {4, 3, 7}), {b.range, b.range}));
    v.push_back(
        Entry("BitwiseNot_" + tag, Op("BitwiseNot", 18, {T(b.t, s)}, {T(b.t, s)}), {b.range}));
  }
  for (const char* dir : {"LEFT", "RIGHT"}) {
    auto op =
        Op("BitShift", 11, {T(U8, s), T(U8, {5})}, {T(U8, s)}, {AttrString("direction", dir)});
    v.push_back(Entry(std::string("BitShift_") + dir, op, {{0, 255}, {0, 10}}));
  }

  // Integer arithmetic at the limits: wrapping Add/Sub/Mul/Neg/Abs, Div by 0 and MIN / -1.
  for (int32_t t : {I32, I64}) {
    const double min = t == I32 ? kI32Min : kI64Min;
    // int64's largest value has no double; the largest double below it stands in.
    const double max = t == I32 ? kI32Max : 9223372036854774784.0;
    // Products stay below 2^53 in magnitude: the CPU computes int32 Mul in double.
    const std::vector<double> a = {max, min, min, -1, 65536, 7, -7, 0, 100, min};
    const std::vector<double> b = {1, -1, 1, min, 65536, 0, -1, 0, -3, 2};
    for (const char* type : {"Add", "Sub", "Mul", "Div", "Min", "Max"}) {
      if (std::string(type) == "Mul" && t == I64) continue;  // int64 products: below
      auto op = Op(type, 14, {T(t, {10}), T(t, {10})}, {T(t, {10})});
      v.push_back(WithValues(Entry(std::string(type) + "_limits_" + TypeTag(t), op), {a, b}));
    }
    for (const char* type : {"Neg", "Abs"})
      v.push_back(WithValues(Entry(std::string(type) + "_limits_" + TypeTag(t),
                                   Op(type, 13, {T(t, {10})}, {T(t, {10})})),
                             {a}));
  }
  v.push_back(
      WithValues(Entry("Mul_limits_i64", Op("Mul", 14, {T(I64, {6}), T(I64, {6})}, {T(I64, {6})})),
                 {{4294967296.0, -4294967296.0, 3037000499.0, kI64Min, -1, 123456789},
                  {4294967296.0, 4294967296.0, 3037000499.0, 1, kI64Min, -987654321}}));

  // Comparisons of bool and 8-bit integers.
  for (const char* type : {"Equal", "Less", "GreaterOrEqual"}) {
    v.push_back(
        Entry(std::string(type) + "_bool", Binary(type, 19, B, {4, 1, 7}, {3, 7}, {4, 3, 7}, B)));
    v.push_back(
        Entry(std::string(type) + "_u8", Binary(type, 19, U8, s, {5}, s, B), {{0, 4}, {0, 4}}));
  }

  // Where with bool and int32 branches.
  v.push_back(Entry("Where_bool", Op("Where", 16, {T(B, {3, 1}), T(B, s), T(B, {5})}, {T(B, s)})));
  v.push_back(
      Entry("Where_i32", Op("Where", 16, {T(B, s), T(I32, {2, 1, 5}), T(I32, {})}, {T(I32, s)})));

  // Cast between every pair of bool, int32, int64, float32, float16 and bfloat16. From a float,
  // NaN, infinities and values beyond int32 go through int64 as the CPU converts them.
  const std::vector<int32_t> types = {B, I32, I64, F, H, BF};
  for (int32_t from : types)
    for (int32_t to : types) {
      CatalogEntry e = Entry("CastPair_" + TypeTag(from) + "_" + TypeTag(to),
                             Op("Cast", 19, {T(from, {24})}, {T(to, {24})}, {AttrInt("to", to)}));
      std::vector<double> values;
      if (from == I32 || from == I64) {
        values = {0, 1, -1, 7, -300, 2049, 65519, 70000, kI32Max, kI32Min, 16777217, -5};
      } else if (from != B) {
        values = Specials();
        for (double x : {3e9, -3e9, 1e20, -1e20, 2.7, -2.7, 255.5, -129.0, 300.25, 1e10})
          values.push_back(x);
      }
      // The CPU reference computes fp16 results in float32: finite values beyond fp16's range
      // (infinities in the kernel's fp16 output) would be no comparison. bfloat16 rounds 65504
      // up to 65536.
      const double top = from == BF ? 65280 : 65504;
      if (to == H)
        values.erase(
            std::remove_if(values.begin(), values.end(),
                           [&](double x) { return std::isfinite(x) && std::fabs(x) > top; }),
            values.end());
      if (from == B) e.ranges = {{0, 1}};
      if (!values.empty()) e.values = {values};
      v.push_back(e);
    }
}

// Fused DAGs mixing the new ops with the old, as exporters' graphs do.
void AddExporterGroups(std::vector<CatalogEntry>& v) {
  auto group = [](std::string name, cg::FusedGroup g, std::vector<std::vector<double>> values = {},
                  std::vector<std::pair<float, float>> ranges = {}) {
    CatalogEntry e;
    e.name = "fused_" + std::move(name);
    e.group = std::move(g);
    e.values = std::move(values);
    e.ranges = std::move(ranges);
    return e;
  };
  const std::vector<int64_t> s = {2, 3, 5};
  {
    // SDPA's guard: Where(IsNaN(x), 0, x).
    cg::FusedGroup g;
    g.inputs = {T(F, s), T(F, {})};
    g.ops.push_back({Op("IsNaN", 20, {T(F, s)}, {T(B, s)}), {0}});
    g.ops.push_back({Op("Where", 16, {T(B, s), T(F, {}), T(F, s)}, {T(F, s)}), {-1, 1, 0}});
    g.outputs = {1};
    AddFloat(v, group("where_isnan", g, {Specials(), {0}}), true);
  }
  {
    // transformers' mask: And(GreaterOrEqual(a, b), LessOrEqual(c, d)) over int64 position
    // ranges broadcast to [1, 1, 8, 8], then Not, Xor and Or, and an int64 Where.
    const std::vector<int64_t> m = {1, 1, 8, 8}, row = {1, 1, 8, 1}, col = {1, 1, 1, 8};
    cg::FusedGroup g;
    g.inputs = {T(I64, row), T(I64, col), T(I64, col), T(I64, row), T(B, m)};
    g.ops.push_back({Binary("GreaterOrEqual", 12, I64, row, col, m, B), {0, 1}});
    g.ops.push_back({Binary("LessOrEqual", 16, I64, col, row, m, B), {2, 3}});
    g.ops.push_back({Binary("And", 7, B, m, m, m), {-1, -2}});
    g.ops.push_back({Op("Not", 1, {T(B, m)}, {T(B, m)}), {4}});
    g.ops.push_back({Binary("Xor", 7, B, m, m, m), {-3, -4}});
    g.ops.push_back({Binary("Or", 7, B, m, m, m), {-5, -3}});
    g.ops.push_back(
        {Op("Where", 16, {T(B, m), T(I64, row), T(I64, col)}, {T(I64, m)}), {-6, 0, 2}});
    g.outputs = {2, 4, 5, 6};
    v.push_back(group("mask_int64_ranges", g, {}, {{-4, 4}, {-4, 4}, {-4, 4}, {-4, 4}, {0, 1}}));
  }
  {
    // Integer Mod, bits and casts in one DAG: Cast(BitwiseAnd(Mod(a, b), c)) * x, with the
    // int64 Mod also an output, and IsInf of x / y (zeros in y make infinities).
    cg::FusedGroup g;
    g.inputs = {T(I64, s), T(I64, {5}), T(I64, {3, 1}), T(F, s), T(F, {5})};
    g.ops.push_back({Op("Mod", 13, {T(I64, s), T(I64, {5})}, {T(I64, s)}), {0, 1}});
    g.ops.push_back({Binary("BitwiseAnd", 18, I64, s, {3, 1}, s), {-1, 2}});
    g.ops.push_back({Op("Cast", 19, {T(I64, s)}, {T(F, s)}, {AttrInt("to", F)}), {-2}});
    g.ops.push_back({Binary("Mul", 14, F, s, s, s), {-3, 3}});
    g.ops.push_back({Binary("Div", 14, F, s, {5}, s), {3, 4}});
    g.ops.push_back({Op("IsInf", 10, {T(F, s)}, {T(B, s)}), {-5}});
    g.ops.push_back({Op("Where", 16, {T(B, s), T(F, s), T(F, s)}, {T(F, s)}), {-6, 3, -5}});
    g.outputs = {3, 0, 6};
    AddFloat(v,
             group("mod_bits_cast_isinf", g, {{}, {3, -4, 0, 5, -1}, {}, {}, {2, 0, -0.5, 0, 4}},
                   {{-50, 50}, {}, {0, 15}, {-3, 3}}),
             true);
  }
  {
    // Integer arithmetic between casts: Cast(f -> i32), Neg, Div by a (possibly zero) divisor,
    // Abs, Max, back to float; bool -> float and fp16 <-> int round trips.
    cg::FusedGroup g;
    g.inputs = {T(F, s), T(I32, {5}), T(B, s)};
    g.ops.push_back({Op("Cast", 19, {T(F, s)}, {T(I32, s)}, {AttrInt("to", I32)}), {0}});
    g.ops.push_back({Op("Neg", 13, {T(I32, s)}, {T(I32, s)}), {-1}});
    g.ops.push_back({Binary("Div", 14, I32, s, {5}, s), {-2, 1}});
    g.ops.push_back({Op("Abs", 13, {T(I32, s)}, {T(I32, s)}), {-3}});
    g.ops.push_back({Binary("Max", 13, I32, s, s, s), {-4, -1}});
    g.ops.push_back({Op("Cast", 19, {T(I32, s)}, {T(F, s)}, {AttrInt("to", F)}), {-5}});
    g.ops.push_back({Op("Cast", 19, {T(B, s)}, {T(F, s)}, {AttrInt("to", F)}), {2}});
    g.ops.push_back({Binary("Add", 14, F, s, s, s), {-6, -7}});
    g.ops.push_back({Op("Sqrt", 13, {T(F, s)}, {T(F, s)}), {-8}});
    g.outputs = {8, 4};
    AddFloat(v, group("int_arith_casts", g, {{}, {3, 0, -2, -1, 5}}, {{-40, 40}}), true);
  }
}

}  // namespace

std::vector<CatalogEntry> ElementwiseCatalog() {
  std::vector<CatalogEntry> v;
  const std::vector<int64_t> s = {2, 3, 5};
  const std::pair<float, float> positive = {0.1f, 4.f};

  // Activations and unary math.
  struct U {
    const char* type;
    int version;
    std::vector<onnx::AttributeProto> attrs;
    std::pair<float, float> range;
    bool bf16;
    const char* tag;
  };
  const std::vector<U> unary = {
      {"Relu", 14, {}, {-3, 3}, true, ""},
      {"LeakyRelu", 16, {}, {-3, 3}, false, ""},
      {"LeakyRelu", 16, {AttrFloat("alpha", 0.2f)}, {-3, 3}, true, "a02"},
      {"Sigmoid", 13, {}, {-8, 8}, true, ""},
      {"Tanh", 13, {}, {-4, 4}, true, ""},
      {"HardSigmoid", 6, {}, {-4, 4}, false, ""},
      {"HardSigmoid", 6, {AttrFloat("alpha", 0.3f), AttrFloat("beta", 0.4f)}, {-4, 4}, false, "ab"},
      {"HardSwish", 14, {}, {-5, 5}, true, ""},
      {"Gelu", 20, {}, {-4, 4}, true, ""},
      {"Gelu", 20, {AttrString("approximate", "tanh")}, {-4, 4}, true, "tanh"},
      {"Elu", 6, {}, {-3, 3}, false, ""},
      {"Elu", 6, {AttrFloat("alpha", 0.5f)}, {-3, 3}, false, "a05"},
      {"Selu", 6, {}, {-3, 3}, false, ""},
      {"Selu", 6, {AttrFloat("alpha", 1.5f), AttrFloat("gamma", 1.2f)}, {-3, 3}, false, "ag"},
      {"Softplus", 1, {}, {-25, 25}, false, ""},
      {"Softsign", 1, {}, {-5, 5}, false, ""},
      {"Erf", 13, {}, {-3, 3}, true, ""},
      {"Exp", 13, {}, {-5, 5}, true, ""},
      {"Log", 13, {}, positive, true, ""},
      {"Sqrt", 13, {}, positive, true, ""},
      {"Reciprocal", 13, {}, {0.2f, 3}, true, ""},
      {"Sin", 7, {}, {-4, 4}, true, ""},
      {"Cos", 7, {}, {-4, 4}, true, ""},
      {"Floor", 13, {}, {-4, 4}, false, ""},
      {"Ceil", 13, {}, {-4, 4}, false, ""},
      {"Round", 11, {}, {-4, 4}, true, ""},
      {"Mish", 18, {}, {-25, 25}, false, ""},
      {"Abs", 13, {}, {-3, 3}, false, ""},
      {"Neg", 13, {}, {-3, 3}, false, ""},
      {"Sign", 13, {}, {-3, 3}, false, ""},
      {"Identity", 16, {}, {-3, 3}, true, ""},
  };
  for (const auto& u : unary) {
    std::string name = u.type;
    if (*u.tag) name += std::string("_") + u.tag;
    AddFloat(v, Entry(name, Unary(u.type, u.version, s, u.attrs), {u.range}), u.bf16);
  }
  AddFloat(v, Entry("Tanh_long", Unary("Tanh", 13, {1000}), {{-4, 4}}), false);
  // Round's ties go to even: halves are exact in every float type (the data comes from the
  // constant, which the kernel reads like any input).
  {
    auto op = Unary("Round", 11, {16});
    SetConstant(op, 0,
                {-3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 4.5, -4.5, 0.49999997, -0.49999997,
                 1e7 + 0.5, 2.4999998, 100.5, -100.5});
    AddFloat(v, Entry("Round_ties", op), true);
  }

  // Clip: opset 6 attributes, opset 13 constant bounds (both, min only), runtime bounds.
  AddFloat(v, Entry("Clip6", Unary("Clip", 6, s, {AttrFloat("min", -1.f), AttrFloat("max", 0.5f)})),
           true);
  {
    auto op = Op("Clip", 13, {T(F, s), T(F, {}), T(F, {})}, {T(F, s)});
    SetConstant(op, 1, {-0.75});
    SetConstant(op, 2, {1.25});
    AddFloat(v, Entry("Clip13_const", op), true);
    auto op2 = Op("Clip", 13, {T(F, s), T(F, {})}, {T(F, s)});
    SetConstant(op2, 1, {0.0});
    AddFloat(v, Entry("Clip13_min", op2), false);
    auto op3 = Op("Clip", 13, {T(F, s), T(0, {}), T(F, {})}, {T(F, s)});
    SetConstant(op3, 2, {0.5});
    AddFloat(v, Entry("Clip13_max", op3), false);
    auto op4 = Op("Clip", 13, {T(F, s), T(F, {}), T(F, {})}, {T(F, s)});
    AddFloat(v, Entry("Clip13_runtime", op4, {{-3, 3}, {-1, -0.5f}, {0.5f, 1}}), false);
  }

  // Binary float ops with broadcasting.
  AddFloat(v, Entry("PRelu_bcast", Binary("PRelu", 16, F, s, {5}, s)), true);
  AddFloat(v, Entry("PRelu_channel", Binary("PRelu", 9, F, {2, 3, 2, 2}, {3}, {2, 3, 2, 2})),
           false);
  AddFloat(v, Entry("Pow", Binary("Pow", 15, F, s, s, s), {{0.1f, 3}, {-2, 2}}), true);
  {
    auto op = Op("Pow", 15, {T(F, s), T(I64, {})}, {T(F, s)});
    SetConstant(op, 1, {3});
    AddFloat(v, Entry("Pow_int_exponent", op), false);
  }

  // Arithmetic over floats and integers, with broadcasting.
  for (const char* type : {"Add", "Sub", "Mul", "Div", "Min", "Max"}) {
    const int ver = std::string(type) == "Min" || std::string(type) == "Max" ? 13 : 14;
    AddFloat(v, Entry(std::string(type) + "_same", Binary(type, ver, F, s, s, s)), true);
    AddFloat(v, Entry(std::string(type) + "_bcast", Binary(type, ver, F, {2, 1, 5}, {3, 1}, s)),
             false);
    AddFloat(v, Entry(std::string(type) + "_scalar", Binary(type, ver, F, s, {}, s)), false);
    for (int32_t t : {I32, I64}) {
      const std::string suffix = t == I32 ? "_i32" : "_i64";
      v.push_back(Entry(std::string(type) + "_bcast" + suffix,
                        Binary(type, ver, t, {4, 1, 7}, {3, 7}, {4, 3, 7})));
    }
  }
  v.push_back(Entry("Max_variadic", Op("Max", 13, {T(F, s), T(F, {5}), T(F, {3, 1})}, {T(F, s)})));
  v.push_back(Entry("Min_variadic_i32",
                    Op("Min", 13, {T(I32, s), T(I32, {5}), T(I32, {3, 1})}, {T(I32, s)})));
  for (const char* type : {"Abs", "Neg", "Sign"})
    for (int32_t t : {I32, I64})
      v.push_back(Entry(std::string(type) + (t == I32 ? "_i32" : "_i64"),
                        Op(type, 13, {T(t, s)}, {T(t, s)})));

  // Comparisons: bool out, over floats and integers (small integer ranges make ties frequent).
  for (const char* type : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}) {
    AddFloat(v, Entry(std::string(type) + "_f", Binary(type, 13, F, s, {5}, s, B)), false);
    v.push_back(Entry(std::string(type) + "_i32",
                      Binary(type, 13, I32, {4, 1, 7}, {3, 7}, {4, 3, 7}, B), {{-3, 3}, {-3, 3}}));
    v.push_back(
        Entry(std::string(type) + "_i64", Binary(type, 13, I64, s, {}, s, B), {{-3, 3}, {-3, 3}}));
  }

  // Logic and selection.
  v.push_back(Entry("Not", Op("Not", 1, {T(B, s)}, {T(B, s)})));
  v.push_back(Entry("And_bcast", Binary("And", 7, B, {2, 1, 5}, {3, 1}, s)));
  v.push_back(Entry("Or_bcast", Binary("Or", 7, B, s, {5}, s)));
  AddFloat(v, Entry("Where", Op("Where", 16, {T(B, {2, 1, 5}), T(F, s), T(F, {5})}, {T(F, s)})),
           true);
  v.push_back(
      Entry("Where_i64", Op("Where", 16, {T(B, {3, 1}), T(I64, {5}), T(I64, s)}, {T(I64, s)})));

  constexpr int32_t U8 = TensorProto::UINT8, I8 = TensorProto::INT8;
  v.push_back(Entry("Where_u8", Op("Where", 16, {T(B, {3, 1}), T(U8, s), T(U8, {5})}, {T(U8, s)}),
                    {{0, 1}, {0, 255}, {0, 255}}));
  v.push_back(Entry("Identity_i8", Op("Identity", 16, {T(I8, s)}, {T(I8, s)}), {{-128, 127}}));
  v.push_back(Entry("Identity_i64", Op("Identity", 16, {T(I64, s)}, {T(I64, s)})));

  // Cast between every pair of storage kinds that matter.
  struct C {
    int32_t from, to;
    const char* tag;
    std::pair<float, float> range;
  };
  for (const C& c : std::vector<C>{{F, H, "f32_f16", {-3, 3}},
                                   {F, BF, "f32_bf16", {-3, 3}},
                                   {H, F, "f16_f32", {-3, 3}},
                                   {BF, F, "bf16_f32", {-3, 3}},
                                   {H, BF, "f16_bf16", {-3, 3}},
                                   {F, I32, "f32_i32", {-100, 100}},
                                   {F, I64, "f32_i64", {-100, 100}},
                                   {I32, F, "i32_f32", {-100, 100}},
                                   {I64, H, "i64_f16", {-100, 100}},
                                   {I64, I32, "i64_i32", {-100, 100}},
                                   {I32, I64, "i32_i64", {-100, 100}},
                                   {B, F, "bool_f32", {0, 1}},
                                   {F, B, "f32_bool", {-1, 1}},
                                   {I32, B, "i32_bool", {-2, 2}},
                                   {B, I64, "bool_i64", {0, 1}},
                                   {F, F, "f32_f32", {-3, 3}},
                                   {F, TensorProto::INT8, "f32_i8", {-100, 100}},
                                   {TensorProto::UINT8, F, "u8_f32", {0, 255}},
                                   {TensorProto::INT8, I32, "i8_i32", {-128, 127}},
                                   {I32, TensorProto::UINT8, "i32_u8", {0, 255}}}) {
    v.push_back(Entry(std::string("Cast_") + c.tag,
                      Op("Cast", 19, {T(c.from, s)}, {T(c.to, s)}, {AttrInt("to", c.to)}),
                      {c.range}));
  }

  // Dropout at inference: the identity (opset 7 single output; opset 13 with ratio and a
  // constant false training_mode).
  AddFloat(v, Entry("Dropout7", Unary("Dropout", 7, s)), false);
  {
    auto op = Op("Dropout", 13, {T(F, s), T(F, {}), T(B, {})}, {T(F, s)});
    SetConstant(op, 1, {0.5});
    SetConstant(op, 2, {0});
    AddFloat(v, Entry("Dropout13", op), false);
  }

  // Fused groups: Add -> Mul -> Relu -> Sigmoid with broadcasting (two outputs), and a
  // mixed-kind DAG Where(Greater(x, y), x, Mul(x, y)).
  {
    const std::vector<int64_t> big = {2, 3, 4, 5};
    cg::FusedGroup g;
    g.inputs = {T(F, big), T(F, {5}), T(F, {3, 1, 1})};
    g.ops.push_back({Binary("Add", 14, F, big, {5}, big), {0, 1}});
    g.ops.push_back({Binary("Mul", 14, F, big, {3, 1, 1}, big), {-1, 2}});
    g.ops.push_back({Unary("Relu", 14, big), {-2}});
    g.ops.push_back({Unary("Sigmoid", 13, big), {-3}});
    g.outputs = {3, 2};
    CatalogEntry e;
    e.name = "fused_add_mul_relu_sigmoid";
    e.group = g;
    AddFloat(v, e, true);

    cg::FusedGroup w;
    w.inputs = {T(F, s), T(F, {3, 1})};
    w.ops.push_back({Binary("Greater", 13, F, s, {3, 1}, s, B), {0, 1}});
    w.ops.push_back({Binary("Mul", 14, F, s, {3, 1}, s), {0, 1}});
    w.ops.push_back({Op("Where", 16, {T(B, s), T(F, s), T(F, s)}, {T(F, s)}), {-1, 0, -2}});
    w.outputs = {2};
    CatalogEntry e2;
    e2.name = "fused_where_greater_mul";
    e2.group = w;
    AddFloat(v, e2, false);
  }
  AddExporterOps(v);
  AddExporterGroups(v);
  return v;
}

}  // namespace ortc::test::cuda
