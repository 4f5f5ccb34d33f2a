// Constant folding: each covered op against values worked out by hand from the ONNX spec,
// and the pass over a whole subgraph (what folds, what must not).
#include <catch2/catch.hpp>

#include <cstring>
#include <set>

#include "graph/model.h"
#include "lowering/constant_folding.h"
#include "model_builder.h"

using namespace ortc;
using lowering::EvaluateOp;
using lowering::HostTensor;
using lowering::IrOp;
using ortc::test::Attr;
using ortc::test::ModelBuilder;
using T = onnx::TensorProto;

namespace {

template <typename V>
HostTensor Make(int32_t dtype, std::vector<int64_t> dims, std::vector<V> values) {
  HostTensor t{dtype, std::move(dims), std::string(values.size() * sizeof(V), '\0')};
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}
HostTensor I64(std::vector<int64_t> dims, std::vector<int64_t> v) {
  return Make<int64_t>(T::INT64, dims, v);
}
HostTensor F32(std::vector<int64_t> dims, std::vector<float> v) {
  return Make<float>(T::FLOAT, dims, v);
}

template <typename V>
std::vector<V> Values(const HostTensor& t) {
  std::vector<V> v(t.bytes.size() / sizeof(V));
  std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
  return v;
}

IrOp Op(const std::string& type, int since, std::vector<Attr> attrs = {}) {
  IrOp op;
  op.op_type = type;
  op.since_version = since;
  for (auto& a : attrs) op.attributes.push_back(a.proto);
  return op;
}

HostTensor Eval(const IrOp& op, std::vector<const HostTensor*> in,
                std::vector<graph::TensorInfo> infos = {}) {
  infos.resize(in.size());
  auto r = EvaluateOp(op, in, infos);
  REQUIRE(r);
  REQUIRE(r->size() == 1);
  return (*r)[0];
}

}  // namespace

TEST_CASE("folding evaluates each covered op as the ONNX spec says", "[folding]") {
  SECTION("Add broadcasts") {
    auto a = F32({2, 3}, {1, 2, 3, 4, 5, 6}), b = F32({3}, {10, 20, 30});
    auto r = Eval(Op("Add", 14), {&a, &b});
    CHECK(r.dims == std::vector<int64_t>{2, 3});
    CHECK(Values<float>(r) == std::vector<float>{11, 22, 33, 14, 25, 36});
  }
  SECTION("integer Div truncates; division by zero declines") {
    auto a = I64({3}, {7, -7, 9}), b = I64({1}, {2});
    CHECK(Values<int64_t>(Eval(Op("Div", 14), {&a, &b})) == std::vector<int64_t>{3, -3, 4});
    auto z = I64({1}, {0});
    std::vector<graph::TensorInfo> infos(2);
    CHECK_FALSE(EvaluateOp(Op("Div", 14), {&a, &z}, infos));
  }
  SECTION("Mod: fmod 0 takes the divisor's sign, fmod 1 the dividend's; floats need fmod 1") {
    auto a = I64({4}, {7, -7, 7, -7}), b = I64({4}, {3, 3, -3, -3});
    CHECK(Values<int64_t>(Eval(Op("Mod", 13), {&a, &b})) == std::vector<int64_t>{1, 2, -2, -1});
    CHECK(Values<int64_t>(Eval(Op("Mod", 13, {Attr("fmod", int64_t{1})}), {&a, &b})) ==
          std::vector<int64_t>{1, -1, 1, -1});
    auto bytes = Make<uint8_t>(T::UINT8, {3}, {0x00, 0x7f, 0xf3}),
         sixteen = Make<uint8_t>(T::UINT8, {}, {16});
    CHECK(Values<uint8_t>(Eval(Op("Mod", 13), {&bytes, &sixteen})) ==
          std::vector<uint8_t>{0x0, 0xf, 0x3});
    auto x = F32({2}, {5.5f, -5.5f}), y = F32({1}, {2});
    CHECK(Values<float>(Eval(Op("Mod", 13, {Attr("fmod", int64_t{1})}), {&x, &y})) ==
          std::vector<float>{1.5f, -1.5f});
    std::vector<graph::TensorInfo> infos(2);
    CHECK_FALSE(EvaluateOp(Op("Mod", 13), {&x, &y}, infos));
    auto zero = I64({1}, {0});
    CHECK_FALSE(EvaluateOp(Op("Mod", 13), {&a, &zero}, infos));
  }
  SECTION("broadcasts along a middle axis, an outer axis and from a scalar") {
    // [2, 3, 2] - [2, 1, 2]: each block of three rows less its own row; then times a scalar.
    auto a = F32({2, 3, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
    auto b = F32({2, 1, 2}, {1, 2, 7, 8});
    auto d = Eval(Op("Sub", 14), {&a, &b});
    CHECK(d.dims == std::vector<int64_t>{2, 3, 2});
    CHECK(Values<float>(d) == std::vector<float>{0, 0, 2, 2, 4, 4, 0, 0, 2, 2, 4, 4});
    auto half = F32({}, {0.5f});
    CHECK(Values<float>(Eval(Op("Mul", 14), {&half, &d})) ==
          std::vector<float>{0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2});
    // [3, 1] against [1, 2]: both sides broadcast.
    auto col = F32({3, 1}, {1, 2, 3}), row = F32({1, 2}, {10, 20});
    CHECK(Values<float>(Eval(Op("Mul", 14), {&col, &row})) ==
          std::vector<float>{10, 20, 20, 40, 30, 60});
    auto less = Eval(Op("Less", 13), {&col, &b});  // [3, 1] against [2, 1, 2]
    CHECK(less.dims == std::vector<int64_t>{2, 3, 2});
    CHECK(Values<uint8_t>(less) == std::vector<uint8_t>{0, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1});
  }
  SECTION("Shape of a static input, with start/end") {
    graph::TensorInfo info{T::FLOAT,
                           graph::Shape{true, {{.value = 2}, {.value = 3}, {.value = 5}}}};
    auto r = Eval(Op("Shape", 15, {Attr("start", int64_t{1})}), {nullptr}, {info});
    CHECK(Values<int64_t>(r) == std::vector<int64_t>{3, 5});
  }
  SECTION("Gather on axis 1 with a negative index") {
    auto data = I64({2, 3}, {1, 2, 3, 4, 5, 6}), idx = I64({2}, {-1, 0});
    auto r = Eval(Op("Gather", 13, {Attr("axis", int64_t{1})}), {&data, &idx});
    CHECK(r.dims == std::vector<int64_t>{2, 2});
    CHECK(Values<int64_t>(r) == std::vector<int64_t>{3, 1, 6, 4});
  }
  SECTION("Concat on axis 0") {
    auto a = I64({1}, {4}), b = I64({2}, {-1, 7});
    CHECK(Values<int64_t>(Eval(Op("Concat", 13, {Attr("axis", int64_t{0})}), {&a, &b})) ==
          std::vector<int64_t>{4, -1, 7});
  }
  SECTION("Unsqueeze (axes as input since 13) and Squeeze") {
    auto x = I64({3}, {1, 2, 3}), axes = I64({2}, {0, -1});
    auto u = Eval(Op("Unsqueeze", 13), {&x, &axes});
    CHECK(u.dims == std::vector<int64_t>{1, 3, 1});
    auto s = Eval(Op("Squeeze", 11, {Attr("axes", std::vector<int64_t>{0})}), {&u});
    CHECK(s.dims == std::vector<int64_t>{3, 1});
  }
  SECTION("Reshape with 0 and -1") {
    auto x = F32({2, 3, 4}, std::vector<float>(24, 1.f)), shape = I64({2}, {0, -1});
    CHECK(Eval(Op("Reshape", 14), {&x, &shape}).dims == std::vector<int64_t>{2, 12});
  }
  SECTION("Transpose with a permutation") {
    auto x = F32({2, 3}, {1, 2, 3, 4, 5, 6});
    auto r = Eval(Op("Transpose", 13, {Attr("perm", std::vector<int64_t>{1, 0})}), {&x});
    CHECK(r.dims == std::vector<int64_t>{3, 2});
    CHECK(Values<float>(r) == std::vector<float>{1, 4, 2, 5, 3, 6});
  }
  SECTION("Slice with a negative step") {
    auto x = I64({5}, {0, 1, 2, 3, 4});
    auto starts = I64({1}, {-1}), ends = I64({1}, {-6}), axes = I64({1}, {0}),
         steps = I64({1}, {-2});
    auto r = Eval(Op("Slice", 13), {&x, &starts, &ends, &axes, &steps});
    CHECK(Values<int64_t>(r) == std::vector<int64_t>{4, 2, 0});
  }
  SECTION("Cast float to int64 truncates") {
    auto x = F32({3}, {1.9f, -1.9f, 3.0f});
    CHECK(Values<int64_t>(Eval(Op("Cast", 13, {Attr("to", int64_t{T::INT64})}), {&x})) ==
          std::vector<int64_t>{1, -1, 3});
  }
  SECTION("Flatten") {
    auto x = F32({2, 3, 4}, std::vector<float>(24, 0.f));
    CHECK(Eval(Op("Flatten", 13, {Attr("axis", int64_t{2})}), {&x}).dims ==
          std::vector<int64_t>{6, 4});
  }
  SECTION("a result above the size limit declines before it is allocated") {
    // 3e9 floats (12 GB), and dims whose product overflows int64: both must decline at once.
    std::vector<graph::TensorInfo> infos(2);
    auto big = I64({2}, {60000, 50000}), huge = I64({2}, {int64_t{1} << 40, int64_t{1} << 40});
    CHECK_FALSE(EvaluateOp(Op("ConstantOfShape", 9), {&big}, infos));
    CHECK_FALSE(EvaluateOp(Op("ConstantOfShape", 9), {&huge}, infos));
    auto one = F32({1}, {1});
    CHECK_FALSE(EvaluateOp(Op("Expand", 13), {&one, &big}, infos));
    auto col = F32({60000, 1}, std::vector<float>(60000, 1.f)),
         row = F32({1, 50000}, std::vector<float>(50000, 1.f));
    CHECK_FALSE(EvaluateOp(Op("Mul", 14), {&col, &row}, infos));
    auto idx = I64({1000000}, std::vector<int64_t>(1000000, 0));  // one row, a million times
    CHECK_FALSE(EvaluateOp(Op("Gather", 13), {&row, &idx}, infos));
    // The limit is the caller's: 16 bytes fit a [2, 2] float result, 12 do not.
    auto two = I64({2}, {2, 2});
    CHECK(EvaluateOp(Op("ConstantOfShape", 9), {&two}, infos, 16));
    CHECK_FALSE(EvaluateOp(Op("ConstantOfShape", 9), {&two}, infos, 12));
  }
  SECTION("an op outside the covered set declines") {
    auto x = F32({2}, {1, 2});
    std::vector<graph::TensorInfo> infos(1);
    CHECK_FALSE(EvaluateOp(Op("Relu", 14), {&x}, infos));
  }
}

TEST_CASE("the folding pass replaces constant subexpressions by weights", "[folding]") {
  // Shape(x) -> Gather(0) -> Unsqueeze -> Concat(-1) -> Reshape(x): the shape chain folds away;
  // the Reshape reads a graph input and stays.
  ModelBuilder b(13, 8);
  b.Input("x", {2, 3, 4})
      .IntInitializer("zero", {0})
      .IntInitializer("minus1", {-1})
      .IntInitializer("ax", {0});
  b.Node("Shape", {"x"}, {"s"})
      .Node("Gather", {"s", "zero"}, {"g"})
      .Node("Unsqueeze", {"g", "ax"}, {"u"});
  b.Node("Concat", {"u", "minus1"}, {"target"}, {Attr("axis", int64_t{0})})
      .Node("Reshape", {"x", "target"}, {"y"});
  b.Output("y");
  b.proto().mutable_graph()->mutable_initializer(0)->clear_dims();  // `zero` is a scalar index
  const std::string bytes = b.Serialize();
  auto m = graph::LoadModelFromBuffer(
      {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, "fold");
  REQUIRE(m.ok());
  const auto& g = (*m)->graph;
  std::vector<int> nodes(g.nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) nodes[i] = static_cast<int>(i);
  auto ir = lowering::SubgraphIr::Build(**m, "fold", nodes, {g.FindValue("x")}, {g.FindValue("y")});
  REQUIRE(ir.ok());
  auto stats = lowering::FoldConstants(&ir.value());
  REQUIRE(stats.ok());
  CHECK(stats->folded_ops == 4);
  REQUIRE(ir->ops.size() == 1);
  CHECK(ir->ops[0].op_type == "Reshape");
  const auto& target = ir->values[ir->ops[0].inputs[1]];
  CHECK(target.kind == lowering::ValueKind::kWeight);
  auto data = target.bytes->ReadAll();
  REQUIRE(data.ok());
  std::vector<int64_t> values(2);
  std::memcpy(values.data(), (*data)->data(), 16);
  CHECK(values == std::vector<int64_t>{2, -1});
  // Weights nothing reads any more are gone.
  for (const auto& v : ir->values) CHECK(v.name != "zero");
}

TEST_CASE("weight preprocessing folds past the size limit, moving a model weight does not",
          "[folding]") {
  // With a 64-byte limit: w (64 bytes) cast to double is 128 bytes, within 8x of w: folds.
  // w2 (96 bytes) transposed only moves a model weight (kernels read it transposed): stays.
  // w2 cast to double (192 bytes) and then transposed: a computed weight, moved: folds.
  // A 4-byte value expanded to [8, 8] (256 bytes) generates data: stays.
  ModelBuilder b(13, 8);
  b.Input("x", {1})
      .Initializer("w", {4, 4}, std::vector<float>(16, 1.f))
      .Initializer("w2", {6, 4}, std::vector<float>(24, 2.f))
      .Initializer("one", {1}, {1.f})
      .IntInitializer("shape", {8, 8});
  const auto to_double = Attr("to", int64_t{T::DOUBLE});
  b.Node("Cast", {"w"}, {"a"}, {to_double})
      .Node("Transpose", {"w2"}, {"b"})
      .Node("Cast", {"w2"}, {"c"}, {to_double})
      .Node("Transpose", {"c"}, {"d"})
      .Node("Expand", {"one", "shape"}, {"e"});
  for (const std::string v : {"a", "b", "d", "e"}) {
    b.Node("ReduceSum", {v}, {"sum_" + v}, {Attr("keepdims", int64_t{0})});
    b.Output("sum_" + v, v == "a" || v == "d" ? T::DOUBLE : T::FLOAT);
  }
  const std::string bytes = b.Serialize();
  auto m = graph::LoadModelFromBuffer(
      {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, "limits");
  REQUIRE(m.ok());
  const auto& g = (*m)->graph;
  std::vector<int> nodes(g.nodes.size()), outputs;
  for (size_t i = 0; i < nodes.size(); ++i) nodes[i] = static_cast<int>(i);
  for (const std::string v : {"a", "b", "d", "e"}) outputs.push_back(g.FindValue("sum_" + v));
  auto ir = lowering::SubgraphIr::Build(**m, "limits", nodes, {g.FindValue("x")}, outputs);
  REQUIRE(ir.ok());
  auto stats = lowering::FoldConstants(&ir.value(), 64);
  REQUIRE(stats.ok());
  CHECK(stats->folded_ops == 3);
  std::multiset<std::string> left;
  for (const auto& op : ir->ops) left.insert(op.op_type);
  CHECK(left == std::multiset<std::string>{"Transpose", "Expand", "ReduceSum", "ReduceSum",
                                           "ReduceSum", "ReduceSum"});
  for (const auto& v : ir->values)
    if (v.name == "a" || v.name == "d") CHECK(v.kind == lowering::ValueKind::kWeight);
}
