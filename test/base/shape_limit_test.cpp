// Every tensor's shape keeps its non-zero dimensions' product within 2^40, so that strides and
// partial products over it cannot overflow. Before, a zero dimension ended the check: a
// zero-element initializer or input of shape [0, 2^62, 2^62] loaded, and kernels computing its
// strides (ScatterElements, Det, GlobalAveragePool, Softmax's rows) overflowed int64 (found by
// reviewing the kernels).
#include <catch2/catch.hpp>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "base/shape_limit.h"
#include "model_builder.h"
#include "ortc/runtime.h"

using ortc::exec::ShapeWithinLimit;
using ortc::test::ModelBuilder;

namespace {
constexpr int64_t kBig = int64_t{1} << 62;
}

TEST_CASE("shapes are bounded in their non-zero dimensions", "[shape_limit]") {
  CHECK(ShapeWithinLimit({}));
  CHECK(ShapeWithinLimit({0}));
  CHECK(ShapeWithinLimit({int64_t{1} << 20, int64_t{1} << 20}));
  CHECK(ShapeWithinLimit({0, int64_t{1} << 40}));
  CHECK_FALSE(ShapeWithinLimit({int64_t{1} << 20, (int64_t{1} << 20) + 1}));
  CHECK_FALSE(ShapeWithinLimit({0, kBig, kBig}));
  CHECK_FALSE(ShapeWithinLimit({kBig, 0, 4}));
  CHECK_FALSE(ShapeWithinLimit({1, -1}));
  CHECK_THROWS_AS(ortc::Tensor::Allocate(ortc::DataType::kFloat, {0, kBig, 4}), std::length_error);
  CHECK(ortc::Tensor::Allocate(ortc::DataType::kFloat, {0, int64_t{1} << 40}).elements() == 0);
}

TEST_CASE("a zero-element initializer with huge dimensions is refused at load", "[shape_limit]") {
  ModelBuilder m;
  m.Input("x", {2}).Node("Add", {"x", "w"}, {"y"}).Output("y");
  auto* w = m.proto().mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {int64_t{0}, kBig, kBig}) w->add_dims(d);
  const std::string bytes = m.Serialize();
  auto session = ortc::Session::CreateFromBuffer(
      {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()});
  REQUIRE_FALSE(session.ok());
  CHECK_THAT(session.status().message(), Catch::Contains("declares more than 2^40 elements"));
}

TEST_CASE("a zero-element input with huge dimensions is refused by Run", "[shape_limit]") {
  ModelBuilder m;
  m.Input("x", {-1, -1}).Node("Relu", {"x"}, {"y"}).Output("y");
  const std::string bytes = m.Serialize();
  auto session = ortc::Session::CreateFromBuffer(
      {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()});
  REQUIRE(session.ok());
  auto out = (*session)->Run(
      {{"x", ortc::Tensor::Borrow(ortc::DataType::kFloat, std::vector<int64_t>{0, kBig, 4}, nullptr,
                                  nullptr)}});
  REQUIRE_FALSE(out.ok());
  CHECK_THAT(out.status().message(), Catch::Contains("more than 2^40 elements in its non-zero"));
}
