// Models that crashed, hung or misbehaved in `ortc compile`'s own shape rules and constant
// folding (found by reviewing ir/graph after the fuzz campaigns, which cover the
// runtime's loader). Every command runs under `timeout`: a hang fails as exit 124, a crash as
// -1 (killed by a signal) or 134 (abort).
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>

#include "model_builder.h"
#include "run_ortc.h"

using ortc::test::Attr;
using ortc::test::ModelBuilder;
using ortc::test::RunOrtcWith;
using ortc::test::RunResult;
using ortc::test::TempDir;

namespace {

RunResult Compile(const TempDir& dir, const std::string& name, const ModelBuilder& m,
                  const std::string& extra = "") {
  const std::string path = (dir / (name + ".onnx")).string();
  m.Save(path);
  return RunOrtcWith("timeout 60",
                     "compile " + path + " -o " + (dir / name).string() + "/ -q " + extra, true);
}

}  // namespace

TEST_CASE("compile refuses an initializer beyond 2^40 elements even with no data",
          "[cli][hostile_compile]") {
  // [2^62] floats with an empty raw_data: dims * 32 bits wrapped to 0 bytes, and constant
  // folding then copied 2^62 elements out of an empty buffer.
  TempDir dir;
  ModelBuilder m;
  m.Input("x", {1}).Node("Transpose", {"w"}, {"t"}).Node("Add", {"x", "x"}, {"y"});
  m.Output("y").Output("t");
  auto* w = m.proto().mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(int64_t{1} << 62);
  w->set_raw_data("");
  auto r = Compile(dir, "huge_initializer", m);
  INFO(r.out);
  CHECK(r.exit_code == 3);  // INVALID_GRAPH
  CHECK_THAT(r.out, Catch::Contains("declares more than 2^40 elements"));
}

TEST_CASE("folding integer arithmetic wraps instead of trapping", "[cli][hostile_compile]") {
  // INT64_MIN / -1 raised SIGFPE inside constant folding.
  TempDir dir;
  ModelBuilder m;
  m.Input("x", {1}, onnx::TensorProto::INT64);
  m.IntInitializer("a", {std::numeric_limits<int64_t>::min()}).IntInitializer("b", {-1});
  m.Node("Div", {"a", "b"}, {"q"}).Node("Add", {"x", "q"}, {"y"});
  auto r = Compile(dir, "int_min_div", m.Output("y", onnx::TensorProto::INT64));
  INFO(r.out);
  CHECK(r.exit_code == 0);
}

TEST_CASE("folding over an empty tensor with a long axis returns at once",
          "[cli][hostile_compile]") {
  // Concat of two [2^40, 0] constants on axis 1 looped 2^40 times appending nothing.
  TempDir dir;
  ModelBuilder m;
  m.Input("x", {1});
  for (const char* name : {"a", "b"}) {
    auto* t = m.proto().mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(int64_t{1} << 40);
    t->add_dims(0);
    t->set_raw_data("");
  }
  m.Node("Concat", {"a", "b"}, {"c"}, {Attr("axis", int64_t{1})}).Node("Shape", {"c"}, {"s"});
  m.Node("Relu", {"x"}, {"y"}).Output("y").Output("s", onnx::TensorProto::INT64);
  auto r = Compile(dir, "empty_concat", m);
  INFO(r.out);
  CHECK(r.exit_code == 0);
}

TEST_CASE("compile's own shape rules survive hostile attributes", "[cli][hostile_compile]") {
  TempDir dir;
  // Split at opset 18 with no output and no split input: its size rule divided by 0 outputs.
  ModelBuilder split(18);
  split.Input("x", {4}).Node("Split", {"x"}, {}).Node("Relu", {"x"}, {"y"}).Output("y");
  auto r = Compile(dir, "split_no_outputs", split);
  INFO(r.out);
  CHECK((r.exit_code == 0 || r.exit_code == 2 || r.exit_code == 3));
  // A Reshape whose shape input is declared [1e12] sized a vector of 1e12 dims.
  ModelBuilder reshape;
  reshape.Input("x", {4}).Input("s", {1000000000000}, onnx::TensorProto::INT64);
  reshape.Node("Reshape", {"x", "s"}, {"y"}).Output("y");
  r = Compile(dir, "reshape_long_shape", reshape);
  INFO(r.out);
  CHECK((r.exit_code == 0 || r.exit_code == 2 || r.exit_code == 3));
}

TEST_CASE("compile's --input-shape gives dims to an input declared without a shape",
          "[cli][hostile_compile]") {
  // The check for a declared shape ran after mutable_shape() had created an empty one, so such
  // an input was refused as "rank 0".
  TempDir dir;
  ModelBuilder m;
  m.Input("x", {}).Node("Relu", {"x"}, {"y"}).Output("y");
  m.proto().mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  auto r = Compile(dir, "no_shape", m, "--input-shape x=2x3");
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, !Catch::Contains("declares rank 0"));
}

TEST_CASE("compile refuses a convolution whose kernel_shape contradicts its weights",
          "[cli][hostile_compile]") {
  // The runtime's kernels refuse it (it would read past the weights), but compile wrote a
  // bundle that could never run.
  TempDir dir;
  for (const char* op : {"Conv", "ConvTranspose"}) {
    ModelBuilder m;
    m.Input("x", {1, 4, 8, 8}).Initializer("w", {4, 4, 1, 1}, std::vector<float>(16, 1.f));
    m.Node(op, {"x", "w"}, {"y"}, {Attr("kernel_shape", std::vector<int64_t>{3, 3})});
    auto r = Compile(dir, std::string("kernel_") + op, m.Output("y"));
    INFO(r.out);
    CHECK(r.exit_code == 3);  // INVALID_GRAPH
    CHECK_THAT(r.out, Catch::Contains("kernel_shape does not match the weights' spatial shape"));
  }
}

TEST_CASE("folding a scale into a Conv leaves a bias of the wrong length to the kernel's check",
          "[cli][hostile_compile]") {
  // Conv -> Mul folded alpha into the weights and read a 1-element bias for all 8 channels
  // (ONNX's Conv inference does not check B's length): the bundle then ran on whatever memory
  // followed. Now the fold is skipped and the kernel refuses the bias.
  TempDir dir;
  ModelBuilder m;
  m.Input("x", {1, 3, 8, 8}).Initializer("w", {8, 3, 3, 3}, std::vector<float>(216, 0.5f));
  m.Initializer("b", {1}, {1.f}).Initializer("two", {}, {2.f});
  m.Node("Conv", {"x", "w", "b"}, {"c"}).Node("Mul", {"c", "two"}, {"y"}).Output("y");
  auto r = Compile(dir, "short_bias", m);
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  auto run = RunOrtcWith("timeout 60",
                         "run " + (dir / "short_bias" / "short_bias_ctx.onnx").string(), true);
  INFO(run.out);
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.out, Catch::Contains("Conv bias must have 8 elements"));
}
