// Where the float kernels keep double: long sums. ReduceMean over a million float32 0.1s is
// 0.1 (to float rounding) only because the row is accumulated in double; summed in float, the
// running total's rounding drifts about 1% (checked here too, so the test shows why).
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "model_builder.h"
#include "ortc/runtime.h"

using namespace ortc;
using ortc::test::Attr;
using ortc::test::ModelBuilder;

namespace {

// Runs model m (input "x" of shape, output "y") on x.
Tensor RunModel(const ModelBuilder& m, const std::vector<int64_t>& shape,
                const std::vector<float>& x) {
  const std::string bytes = m.Serialize();
  auto session =
      Session::CreateFromBuffer({reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()});
  REQUIRE(session.ok());
  auto out = (*session)->Run(
      {{"x", Tensor::FromBytes(DataType::kFloat, shape, x.data(), x.size() * sizeof(float))}});
  REQUIRE(out.ok());
  return (*out)[0];
}

Tensor RunOne(const std::string& op, const std::vector<int64_t>& shape, const std::vector<float>& x,
              std::vector<Attr> attrs = {}) {
  ModelBuilder m;
  m.Input("x", shape);
  if (op == "ReduceSum") {  // its axes are an input since opset 13: the last one
    m.IntInitializer("axes", {-1});
    m.Node(op, {"x", "axes"}, {"y"}, std::move(attrs));
  } else {
    m.Node(op, {"x"}, {"y"}, std::move(attrs));
  }
  m.Output("y");
  return RunModel(m, shape, x);
}

}  // namespace

TEST_CASE("a long float ReduceMean accumulates in double", "[reductions]") {
  const int64_t n = 1 << 20;
  const std::vector<float> x(n, 0.1f);
  float in_float = 0.f;  // what a float accumulator would give
  for (float v : x) in_float += v;
  const float float_mean = in_float / static_cast<float>(n);
  REQUIRE(std::fabs(float_mean - 0.1f) > 5e-4f);  // float accumulation is visibly off

  const Tensor y = RunOne("ReduceMean", {2, n / 2}, x, {Attr("axes", std::vector<int64_t>{1})});
  REQUIRE(y.elements() == 2);
  CHECK(y.data<float>()[0] == 0.1f);
  CHECK(y.data<float>()[1] == 0.1f);
}

TEST_CASE("float row reductions match a direct double computation", "[reductions]") {
  const int64_t rows = 3, n = 1000;
  std::vector<float> x(rows * n);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.013f * static_cast<float>(i)) * 3.f;
  for (const char* op : {"ReduceSum", "ReduceMax", "ReduceMin", "ReduceL2", "ReduceSumSquare"}) {
    const Tensor y = RunOne(op, {rows, n}, x,
                            std::string(op) == "ReduceSum"
                                ? std::vector<Attr>{}
                                : std::vector<Attr>{Attr("axes", std::vector<int64_t>{-1})});
    REQUIRE(y.elements() == rows);
    for (int64_t r = 0; r < rows; ++r) {
      double sum = 0, sq = 0, mx = -1e30, mn = 1e30;
      for (int64_t i = 0; i < n; ++i) {
        const double v = x[r * n + i];
        sum += v;
        sq += v * v;
        mx = std::max(mx, v);
        mn = std::min(mn, v);
      }
      const std::string name = op;
      const double want = name == "ReduceSum"   ? sum
                          : name == "ReduceMax" ? mx
                          : name == "ReduceMin" ? mn
                          : name == "ReduceL2"  ? std::sqrt(sq)
                                                : sq;
      CHECK(y.data<float>()[r] == Approx(want).epsilon(1e-6));
    }
  }
}

TEST_CASE("float LayerNormalization matches a direct double computation", "[reductions]") {
  const int64_t rows = 4, n = 384;
  std::vector<float> x(rows * n), scale(n), bias(n);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 100.f + std::cos(0.7f * static_cast<float>(i));
  for (int64_t i = 0; i < n; ++i) {
    scale[i] = 0.5f + 0.001f * static_cast<float>(i);
    bias[i] = -0.25f;
  }
  ModelBuilder m;
  m.Input("x", {rows, n}).Initializer("s", {n}, scale).Initializer("b", {n}, bias);
  m.Node("LayerNormalization", {"x", "s", "b"}, {"y"}, {Attr("epsilon", 1e-5f)});
  m.Output("y");
  const Tensor out = RunModel(m, {rows, n}, x);
  const float* y = out.data<float>();
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < n; ++i) mean += x[r * n + i];
    mean /= n;
    for (int64_t i = 0; i < n; ++i) var += (x[r * n + i] - mean) * (x[r * n + i] - mean);
    var /= n;
    for (int64_t i = 0; i < n; ++i) {
      const double want = (x[r * n + i] - mean) / std::sqrt(var + 1e-5) * scale[i] + bias[i];
      CHECK(y[r * n + i] == Approx(want).margin(2e-4));
    }
  }
}

TEST_CASE("Softmax of a scalar is 1: one row of one element", "[reductions]") {
  // fuzz_model (UBSan) fed a 0-D input: the softmax axis was read from a shape with no
  // dimensions. The fuzz input is kept in test/fuzz/regressions/fuzz_model/softmax_scalar.
  for (const std::string op : {"Softmax", "LogSoftmax", "Hardmax"}) {
    const Tensor y = RunOne(op, {}, {3.5f});
    INFO(op);
    REQUIRE(y.elements() == 1);
    CHECK(y.data<float>()[0] == (op == "LogSoftmax" ? 0.f : 1.f));
  }
}
