// INT4 / UINT4 initializers and blocked DequantizeLinear (opset 21) rewritten at load: the
// values the rewritten model computes against the ONNX definition worked out here from the
// integers, and the forms ortc does not take refused with what it takes instead.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "graph/model.h"
#include "model_builder.h"
#include "run_rewritten.h"

using namespace ortc;
using ortc::test::Attr;
using ortc::test::ModelBuilder;
using T = onnx::TensorProto;

namespace {

constexpr int32_t kUint4 = 21, kInt4 = 22;

// A 4-bit initializer: values packed two a byte, low nibble first (a pad nibble when odd).
void FourBit(ModelBuilder& b, const std::string& name, int32_t type, std::vector<int64_t> dims,
             const std::vector<int>& values) {
  auto* t = b.proto().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (int64_t d : dims) t->add_dims(d);
  std::string raw((values.size() + 1) / 2, '\0');
  for (size_t i = 0; i < values.size(); ++i)
    raw[i / 2] = static_cast<char>(raw[i / 2] | ((values[i] & 0xF) << (i % 2 ? 4 : 0)));
  t->set_raw_data(raw);
}

Result<std::unique_ptr<graph::Model>> Load(ModelBuilder& b) {
  const std::string bytes = b.Serialize();
  graph::LoadOptions o;
  o.fold_shapes = true;
  return graph::LoadModelFromBuffer(
      {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, "four_bit.onnx", o);
}

std::vector<float> Values(const Tensor& t) {
  const float* p = t.data<float>();
  return {p, p + t.elements()};
}

}  // namespace

TEST_CASE("int4 weights in ragged blocks dequantize as the definition says", "[four_bit]") {
  // x int4 [5, 3] (15 values: a pad nibble), blocks of 2 along axis 0: 3 blocks, the last one
  // row. y = (x - z[row / 2]) * s[row / 2], per column.
  const std::vector<int> x = {-8, 7, 0, 1, -1, 3, 5, -5, 2, -3, 4, -2, 6, 0, -7};
  const std::vector<int> z = {1, -1, 0, 0, 2, -2, -8, 7, 3};
  const std::vector<float> s = {0.5f, 0.25f, 2.f, 1.f, 0.125f, 4.f, 3.f, 0.75f, 1.5f};
  ModelBuilder b(21, 10);
  b.Input("unused", {1});
  FourBit(b, "x", kInt4, {5, 3}, x);
  FourBit(b, "z", kInt4, {3, 3}, z);
  b.Initializer("s", {3, 3}, s);
  b.Node("DequantizeLinear", {"x", "s", "z"}, {"y"},
         {Attr("axis", int64_t{0}), Attr("block_size", int64_t{2})});
  b.Node("Identity", {"unused"}, {"echo"});
  b.Output("y").Output("echo");
  auto m = Load(b);
  REQUIRE(m.ok());
  for (const auto& n : (*m)->graph.nodes) CHECK(n.op_type != "DequantizeLinear");
  auto out = test::RunRewritten(
      **m, {{"unused", Tensor::FromBytes(DataType::kFloat, {1}, s.data(), sizeof(float))}});
  std::vector<float> want;
  for (int row = 0; row < 5; ++row)
    for (int col = 0; col < 3; ++col) {
      const int k = (row / 2) * 3 + col;
      want.push_back(static_cast<float>(x[row * 3 + col] - z[k]) * s[k]);
    }
  CHECK(out[0].shape() == std::vector<int64_t>{5, 3});
  CHECK(Values(out[0]) == want);
}

TEST_CASE("uint4 per-axis dequantization reads the same integers in 8 bits", "[four_bit]") {
  const std::vector<int> x = {0, 15, 8, 3, 9, 1}, z = {8, 0, 1};
  const std::vector<float> s = {0.5f, 2.f, -1.f};
  ModelBuilder b(21, 10);
  b.Input("unused", {1});
  FourBit(b, "x", kUint4, {2, 3}, x);
  FourBit(b, "z", kUint4, {3}, z);
  b.Initializer("s", {3}, s);
  b.Node("DequantizeLinear", {"x", "s", "z"}, {"y"}, {Attr("axis", int64_t{1})});
  b.Node("Identity", {"unused"}, {"echo"});
  b.Output("y").Output("echo");
  auto m = Load(b);
  REQUIRE(m.ok());
  auto out = test::RunRewritten(
      **m, {{"unused", Tensor::FromBytes(DataType::kFloat, {1}, s.data(), sizeof(float))}});
  std::vector<float> want;
  for (int i = 0; i < 6; ++i) want.push_back(static_cast<float>(x[i] - z[i % 3]) * s[i % 3]);
  CHECK(Values(out[0]) == want);
}

TEST_CASE("4-bit tensors outside DequantizeLinear's initializers are refused with the reason",
          "[four_bit]") {
  SECTION("a 4-bit graph input") {
    ModelBuilder b(21, 10);
    b.Input("x", {4}, kInt4).Initializer("s", {1}, {1.f});
    b.Node("DequantizeLinear", {"x", "s"}, {"y"}).Output("y");
    auto m = Load(b);
    REQUIRE_FALSE(m.ok());
    CHECK(m.status().code() == StatusCode::kNotImplemented);
    CHECK_THAT(m.status().message(), Catch::Contains("'x' is a 4-bit graph input"));
  }
  SECTION("a 4-bit initializer another op reads") {
    ModelBuilder b(21, 10);
    b.Input("a", {4}, T::INT8);
    FourBit(b, "w", kInt4, {4}, {1, 2, 3, 4});
    b.Node("Add", {"a", "w"}, {"y"}).Output("y", T::INT8);
    auto m = Load(b);
    REQUIRE_FALSE(m.ok());
    CHECK_THAT(m.status().message(), Catch::Contains("'w' is read by Add"));
  }
  SECTION("blocks of a computed value") {
    ModelBuilder b(21, 10);
    b.Input("x", {4, 2}, T::INT8).Initializer("s", {2, 2}, {1.f, 1.f, 1.f, 1.f});
    b.Node("DequantizeLinear", {"x", "s"}, {"y"},
           {Attr("axis", int64_t{0}), Attr("block_size", int64_t{2})});
    b.Output("y");
    auto m = Load(b);
    REQUIRE_FALSE(m.ok());
    CHECK_THAT(m.status().message(), Catch::Contains("blocks of a computed value"));
  }
  SECTION("a scale of the wrong shape") {
    ModelBuilder b(21, 10);
    b.Input("unused", {1});
    FourBit(b, "x", kUint4, {4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
    b.Initializer("s", {3, 2}, {1.f, 1.f, 1.f, 1.f, 1.f, 1.f});
    b.Node("DequantizeLinear", {"x", "s"}, {"y"},
           {Attr("axis", int64_t{0}), Attr("block_size", int64_t{2})});
    b.Node("Identity", {"unused"}, {"echo"});
    b.Output("y").Output("echo");
    auto m = Load(b);
    REQUIRE_FALSE(m.ok());
    CHECK_THAT(m.status().message(), Catch::Contains("needs a scale of shape [2,2], not [3,2]"));
  }
}
