// Elementwise entries of the kernel catalog: every op the family claims, over odd sizes,
// broadcasting, scalars and each attribute variant, in float32/float16 (bfloat16 for a subset),
// int32/int64 and bool; plus fused groups.
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
      {"Reciprocal", 13, {}, {0.2f, 3}, false, ""},
      {"Sin", 7, {}, {-4, 4}, false, ""},
      {"Cos", 7, {}, {-4, 4}, false, ""},
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
  return v;
}

}  // namespace ortc::test::cuda
