// Data-movement kernels check the sizes they take from their inputs before indexing with them
// or multiplying them. Found by reviewing the kernels after the fuzz target found Slice reading a
// short ends past its end: Transpose with a repeated axis and Split with sizes that do not tile
// the axis read past the input (ASan); Pad with an axes input of another type dereferenced an
// empty optional; Reshape, Tile, Pad and Range overflowed int64 on hostile sizes (UBSan); and
// ConstantOfShape read an empty value tensor's first element.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "model_builder.h"
#include "ortc/runtime.h"

using ortc::test::Attr;
using ortc::test::ModelBuilder;
using T = onnx::TensorProto;

namespace {

// Runs the model on x (a 2x3 float tensor of ones) and returns the run's error message, or
// "ran" when the run succeeded.
std::string RunError(const ModelBuilder& m) {
  const std::string bytes = m.Serialize();
  auto session = ortc::Session::CreateFromBuffer(
      {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()});
  if (!session.ok()) return "load: " + session.status().message();
  std::vector<float> x(6, 1.f);
  auto out = (*session)->Run(
      {{"x", ortc::Tensor::FromBytes(ortc::DataType::kFloat, {2, 3}, x.data(), 24)}});
  return out.ok() ? "ran" : out.status().message();
}

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

}  // namespace

TEST_CASE("Transpose refuses a perm that repeats an axis", "[kernels][data_movement]") {
  ModelBuilder m;
  m.Input("x", {2, 3}).Node("Transpose", {"x"}, {"y"}, {Attr("perm", std::vector<int64_t>{0, 0})});
  CHECK_THAT(RunError(m.Output("y")),
             Catch::Contains("perm is not a permutation of the input's axes"));
}

TEST_CASE("Split refuses sizes that do not tile the axis", "[kernels][data_movement]") {
  for (const auto& sizes : {std::vector<int64_t>{2, 2}, std::vector<int64_t>{4, -1},
                            std::vector<int64_t>{1, 1}, std::vector<int64_t>{kMax, 2}}) {
    ModelBuilder m;
    m.Input("x", {2, 3}).IntInitializer("split", sizes);
    m.Node("Split", {"x", "split"}, {"a", "b"}, {Attr("axis", int64_t{1})});
    INFO(sizes[0] << ", " << sizes[1]);
    CHECK_THAT(RunError(m.Output("a").Output("b")),
               Catch::Contains("split sizes must be non-negative and sum to the axis' length 3"));
  }
  ModelBuilder ok;
  ok.Input("x", {2, 3}).IntInitializer("split", {1, 2});
  ok.Node("Split", {"x", "split"}, {"a", "b"}, {Attr("axis", int64_t{1})});
  CHECK(RunError(ok.Output("a").Output("b")) == "ran");
}

TEST_CASE("Tile refuses negative and overflowing repeats", "[kernels][data_movement]") {
  for (const auto& reps : {std::vector<int64_t>{1, -1}, std::vector<int64_t>{kMax / 2, 1}}) {
    ModelBuilder m;
    m.Input("x", {2, 3}).IntInitializer("r", reps).Node("Tile", {"x", "r"}, {"y"});
    CHECK_THAT(RunError(m.Output("y")), Catch::Contains("repeats must be non-negative"));
  }
}

TEST_CASE("Pad refuses overflowing pads, crops past the axis and axes of a float type",
          "[kernels][data_movement]") {
  const std::vector<std::pair<std::vector<int64_t>, std::string>> cases = {
      {{0, kMax, 0, 1}, "pads must be within 2^40"},
      {{0, std::numeric_limits<int64_t>::min(), 0, 0}, "pads must be within 2^40"},
      {{0, -2, 0, -2}, "pads remove more than the axis' length"}};
  for (const auto& [pads, expect] : cases) {
    ModelBuilder m;
    m.Input("x", {2, 3}).IntInitializer("p", pads).Node("Pad", {"x", "p"}, {"y"});
    CHECK_THAT(RunError(m.Output("y")), Catch::Contains(expect));
  }
  ModelBuilder m(18);
  m.Input("x", {2, 3}).IntInitializer("p", {0, 0}).Initializer("v", {}, {0.f});
  m.Initializer("axes", {1}, {1.f}).Node("Pad", {"x", "p", "v", "axes"}, {"y"});
  CHECK_THAT(RunError(m.Output("y")), Catch::Contains("axes must be int32 or int64"));
}

TEST_CASE("Reshape refuses a shape whose product overflows", "[kernels][data_movement]") {
  ModelBuilder m;
  m.Input("x", {2, 3}).IntInitializer("s", {int64_t{1} << 32, int64_t{1} << 32, 0, -1});
  m.Node("Reshape", {"x", "s"}, {"y"}, {Attr("allowzero", int64_t{1})});
  CHECK_THAT(RunError(m.Output("y")), Catch::Contains("cannot reshape 6 elements"));
}

TEST_CASE("Range refuses an endless or huge count", "[kernels][data_movement]") {
  const float inf = std::numeric_limits<float>::infinity();
  for (const auto& [limit, delta] :
       {std::pair{inf, 1.f}, std::pair{1e30f, 1e-3f}, std::pair{inf, inf}}) {
    ModelBuilder m;
    m.Input("x", {2, 3}).Initializer("s", {}, {0.f}).Initializer("l", {}, {limit});
    m.Initializer("d", {}, {delta}).Node("Range", {"s", "l", "d"}, {"y"});
    m.Node("Identity", {"x"}, {"z"});
    INFO(limit << " by " << delta);
    CHECK_THAT(RunError(m.Output("y").Output("z")),
               Catch::Contains("start, limit and delta give more than 2^40 elements"));
  }
}

TEST_CASE("ConstantOfShape refuses a value that is not one element", "[kernels][data_movement]") {
  ModelBuilder m;
  m.Input("x", {2, 3}).IntInitializer("shape", {2});
  m.Node("ConstantOfShape", {"shape"}, {"y"}).Node("Identity", {"x"}, {"z"});
  auto* value = m.proto().mutable_graph()->mutable_node(0)->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(T::FLOAT);
  value->mutable_t()->add_dims(0);
  CHECK_THAT(RunError(m.Output("y").Output("z")), Catch::Contains("value must have one element"));
}
