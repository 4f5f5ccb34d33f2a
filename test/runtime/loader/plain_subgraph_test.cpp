// Control flow in plain (uncompiled) models: the loader turns subgraph attributes into nested
// graphs once at load, so `ortc verify` and the C API run a source model with If/Loop the same
// way as its compiled form. Expected values are worked out in the test from the model's math.
#include <catch2/catch.hpp>

#include "model_builder.h"
#include "ortc/runtime.h"

using namespace ortc;
using ortc::test::Attr;
using ortc::test::ModelBuilder;
using T = onnx::TensorProto;

namespace {

// Loop(n) over acc = x: even iterations acc = (acc + bias) * k (bias from the main graph, k a
// branch initializer), odd ones acc = acc - x (x two scopes up); scan output acc * x.
ModelBuilder LoopIfModel() {
  ModelBuilder then_b, else_b, body;
  then_b.Initializer("k", {3}, {1.5f, -0.5f, 0.25f});
  then_b.Node("Add", {"acc_in", "bias"}, {"t_sum"}).Node("Mul", {"t_sum", "k"}, {"t_out"});
  then_b.Output("t_out");
  else_b.Node("Sub", {"acc_in", "x"}, {"e_out"}).Output("e_out");
  body.Input("i", {}, T::INT64).Input("c_in", {}, T::BOOL).Input("acc_in", {3});
  body.IntInitializer("two", {2}).IntInitializer("zero", {0});
  body.Node("Mod", {"i", "two"}, {"parity"}).Node("Equal", {"parity", "zero"}, {"even_1"});
  body.Node("Squeeze", {"even_1"}, {"even"});
  body.Node(
      "If", {"even"}, {"acc_out"},
      {Attr("then_branch", then_b.proto().graph()), Attr("else_branch", else_b.proto().graph())});
  body.Node("Identity", {"c_in"}, {"c_out"}).Node("Mul", {"acc_out", "x"}, {"scan_out"});
  body.Output("c_out", T::BOOL).Output("acc_out").Output("scan_out");
  ModelBuilder m;
  m.Input("x", {3}).Input("n", {}, T::INT64);
  m.Initializer("bias", {3}, {0.5f, -1.f, 2.f});
  m.Node("Loop", {"n", "", "x"}, {"acc", "scans"}, {Attr("body", body.proto().graph())});
  m.Output("acc").Output("scans");
  return m;
}

}  // namespace

TEST_CASE("a plain model's Loop with a nested If runs from its subgraphs", "[plain_subgraph]") {
  auto m = LoopIfModel();
  const std::string bytes = m.Serialize();
  auto session =
      Session::CreateFromBuffer({reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()});
  REQUIRE(session.ok());
  const float x[3] = {0.3f, -0.7f, 1.1f}, bias[3] = {0.5f, -1.f, 2.f}, k[3] = {1.5f, -0.5f, 0.25f};
  const int64_t n = 3;
  auto out = (*session)->Run({{"x", Tensor::FromBytes(DataType::kFloat, {3}, x, sizeof x)},
                              {"n", Tensor::FromBytes(DataType::kInt64, {}, &n, sizeof n)}});
  REQUIRE(out.ok());
  float acc[3], scans[3][3];
  for (int j = 0; j < 3; ++j) acc[j] = x[j];
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      acc[j] = i % 2 == 0 ? (acc[j] + bias[j]) * k[j] : acc[j] - x[j];
      scans[i][j] = acc[j] * x[j];
    }
  }
  REQUIRE((*out)[0].shape() == std::vector<int64_t>{3});
  REQUIRE((*out)[1].shape() == std::vector<int64_t>{3, 3});
  for (int j = 0; j < 3; ++j) CHECK((*out)[0].data<float>()[j] == Approx(acc[j]));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) CHECK((*out)[1].data<float>()[i * 3 + j] == Approx(scans[i][j]));
}

TEST_CASE("a Loop with neither trip count nor condition is refused, not run forever",
          "[plain_subgraph]") {
  ModelBuilder body;
  body.Input("i", {}, T::INT64).Input("c_in", {}, T::BOOL).Input("v_in", {1});
  body.Node("Identity", {"c_in"}, {"c_out"}).Node("Identity", {"v_in"}, {"v_out"});
  body.Output("c_out", T::BOOL).Output("v_out");
  ModelBuilder m;
  m.Input("v", {1});
  m.Node("Loop", {"", "", "v"}, {"v_final"}, {Attr("body", body.proto().graph())});
  m.Output("v_final");
  const std::string bytes = m.Serialize();
  auto session =
      Session::CreateFromBuffer({reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()});
  REQUIRE(session.ok());
  const float v = 1.f;
  auto out = (*session)->Run({{"v", Tensor::FromBytes(DataType::kFloat, {1}, &v, sizeof v)}});
  REQUIRE_FALSE(out.ok());
  CHECK_THAT(out.status().message(), Catch::Contains("never end"));
}

TEST_CASE("a Scan whose body returns fewer values than the node has outputs is refused",
          "[plain_subgraph]") {
  ModelBuilder body;
  body.Input("s_in", {2}).Input("x_t", {2});
  body.Node("Add", {"s_in", "x_t"}, {"s_out"});
  body.Output("s_out");  // the node below also expects a scan output
  ModelBuilder m;
  m.Input("s0", {2}).Input("X", {3, 2});
  m.Node("Scan", {"s0", "X"}, {"s_final", "Y"},
         {Attr("body", body.proto().graph()), Attr("num_scan_inputs", int64_t{1})});
  m.Output("s_final").Output("Y");
  const std::string bytes = m.Serialize();
  auto session = Session::CreateFromBuffer(
      {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()});
  REQUIRE(session.ok());
  const float s0[2] = {0, 0}, x[6] = {1, 2, 3, 4, 5, 6};
  auto out = (*session)->Run({{"s0", Tensor::FromBytes(DataType::kFloat, {2}, s0, sizeof s0)},
                              {"X", Tensor::FromBytes(DataType::kFloat, {3, 2}, x, sizeof x)}});
  REQUIRE_FALSE(out.ok());
  CHECK_THAT(out.status().message(), Catch::Contains("do not match the Scan's outputs"));
}
