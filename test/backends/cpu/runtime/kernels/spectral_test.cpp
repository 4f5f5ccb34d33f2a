// DFT and STFT kernels against a naive double-precision DFT written here: lengths that are not
// powers of two (direct and Bluestein paths), padding and truncation by dft_length, onesided
// output, an inverse round trip, the opset-20 axis input, windowed STFT frames, and bad
// dft_length / frame_length / frame_step values refused with an error instead of a crash.
#include <catch2/catch.hpp>

#include <cmath>
#include <complex>
#include <random>

#include "cpu_kernel/kernel_context.h"
#include "model_builder.h"
#include "ortc/runtime.h"

using namespace ortc;
using ortc::test::Attr;
using ortc::test::ModelBuilder;

namespace {

using Cd = std::complex<double>;

// X[k] = sum_j x[j] exp(-+2 pi i j k / n), scaled by 1/n for the inverse.
std::vector<Cd> NaiveDft(const std::vector<Cd>& x, bool inverse) {
  const size_t n = x.size();
  std::vector<Cd> out(n);
  const double sign = inverse ? 1.0 : -1.0;
  for (size_t k = 0; k < n; ++k) {
    Cd acc = 0;
    for (size_t j = 0; j < n; ++j) {
      const double angle = sign * 2.0 * M_PI * static_cast<double>((j * k) % n) / n;
      acc += x[j] * Cd(std::cos(angle), std::sin(angle));
    }
    out[k] = inverse ? acc / static_cast<double>(n) : acc;
  }
  return out;
}

std::vector<float> RandomFloats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

Tensor FloatTensor(std::vector<int64_t> shape, const std::vector<float>& v) {
  return Tensor::FromBytes(DataType::kFloat, std::move(shape), v.data(), v.size() * 4);
}

Tensor Int64Scalar(int64_t v) {
  return Tensor::FromBytes(DataType::kInt64, {}, &v, 8);
}

Result<std::vector<Tensor>> RunModel(ModelBuilder& b,
                                     const std::vector<std::pair<std::string, Tensor>>& feeds) {
  const std::string bytes = b.Serialize();
  auto s =
      Session::CreateFromBuffer({reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()});
  if (!s.ok()) return s.status();
  return (*s)->Run(feeds);
}

// One DFT node over x [batch, length, comp] on axis 1, with an optional dft_length initializer.
Result<std::vector<Tensor>> RunDft(const std::vector<float>& x, int64_t batch, int64_t length,
                                   int64_t comp, std::vector<Attr> attrs, int64_t dft_length = -1) {
  ModelBuilder b;
  b.Input("x", {batch, length, comp});
  std::vector<std::string> inputs = {"x"};
  if (dft_length >= 0) {
    b.IntInitializer("n", {dft_length});
    inputs.push_back("n");
  }
  attrs.emplace_back("axis", int64_t{1});
  b.Node("DFT", inputs, {"y"}, attrs).Output("y");
  return RunModel(b, {{"x", FloatTensor({batch, length, comp}, x)}});
}

// Line b of x [batch, length, comp] as complex values, zero-padded or truncated to n.
std::vector<Cd> Line(const std::vector<float>& x, int64_t b, int64_t length, int64_t comp,
                     int64_t n) {
  std::vector<Cd> line(static_cast<size_t>(n));
  for (int64_t j = 0; j < std::min(length, n); ++j) {
    const float* p = x.data() + (b * length + j) * comp;
    line[j] = Cd(p[0], comp == 2 ? p[1] : 0.0);
  }
  return line;
}

// y [batch, bins, 2] against the naive transform of each line, to float precision.
void CheckAgainstNaive(const Tensor& y, const std::vector<float>& x, int64_t batch, int64_t length,
                       int64_t comp, int64_t n, int64_t bins, bool inverse) {
  REQUIRE(y.shape() == std::vector<int64_t>{batch, bins, 2});
  const float* got = y.data<float>();
  for (int64_t b = 0; b < batch; ++b) {
    const auto want = NaiveDft(Line(x, b, length, comp, n), inverse);
    for (int64_t k = 0; k < bins; ++k) {
      INFO("line " << b << " bin " << k);
      CHECK(got[(b * bins + k) * 2] == Approx(want[k].real()).margin(1e-5));
      CHECK(got[(b * bins + k) * 2 + 1] == Approx(want[k].imag()).margin(1e-5));
    }
  }
}

}  // namespace

TEST_CASE("DFT of real and complex lines of length 12 and 7 matches a naive DFT",
          "[kernels][dft]") {
  for (int64_t length : {12, 7}) {
    for (int64_t comp : {1, 2}) {
      INFO("length " << length << ", components " << comp);
      const auto x = RandomFloats(static_cast<size_t>(3 * length * comp), 11);
      auto y = RunDft(x, 3, length, comp, {});
      REQUIRE(y.ok());
      CheckAgainstNaive((*y)[0], x, 3, length, comp, length, length, false);
    }
  }
}

TEST_CASE("DFT of long non-power-of-two lines (Bluestein) matches a naive DFT", "[kernels][dft]") {
  for (int64_t length : {100, 257}) {
    INFO("length " << length);
    const auto x = RandomFloats(static_cast<size_t>(2 * length * 2), 5);
    auto y = RunDft(x, 2, length, 2, {});
    REQUIRE(y.ok());
    CheckAgainstNaive((*y)[0], x, 2, length, 2, length, length, false);
  }
}

TEST_CASE("DFT onesided keeps floor(n/2)+1 bins, and dft_length pads and truncates",
          "[kernels][dft]") {
  const auto x = RandomFloats(2 * 7, 3);
  auto one = RunDft(x, 2, 7, 1, {Attr("onesided", int64_t{1})});
  REQUIRE(one.ok());
  CheckAgainstNaive((*one)[0], x, 2, 7, 1, 7, 4, false);
  auto padded = RunDft(x, 2, 7, 1, {}, 12);
  REQUIRE(padded.ok());
  CheckAgainstNaive((*padded)[0], x, 2, 7, 1, 12, 12, false);
  auto truncated = RunDft(x, 2, 7, 1, {}, 5);
  REQUIRE(truncated.ok());
  CheckAgainstNaive((*truncated)[0], x, 2, 7, 1, 5, 5, false);
}

TEST_CASE("DFT inverse matches a naive inverse and undoes the forward transform",
          "[kernels][dft]") {
  for (int64_t length : {12, 7, 16, 45}) {
    INFO("length " << length);
    const auto x = RandomFloats(static_cast<size_t>(2 * length * 2), 7);
    auto inv = RunDft(x, 2, length, 2, {Attr("inverse", int64_t{1})});
    REQUIRE(inv.ok());
    CheckAgainstNaive((*inv)[0], x, 2, length, 2, length, length, true);

    ModelBuilder b;
    b.Input("x", {2, length, 2});
    b.Node("DFT", {"x"}, {"f"}, {Attr("axis", int64_t{1})});
    b.Node("DFT", {"f"}, {"y"}, {Attr("axis", int64_t{1}), Attr("inverse", int64_t{1})});
    b.Output("y");
    auto y = RunModel(b, {{"x", FloatTensor({2, length, 2}, x)}});
    REQUIRE(y.ok());
    const Tensor& back = (*y)[0];
    REQUIRE(back.shape() == std::vector<int64_t>{2, length, 2});
    for (size_t i = 0; i < x.size(); ++i) CHECK(back.data<float>()[i] == Approx(x[i]).margin(1e-5));
  }
}

TEST_CASE("DFT opset 20 takes the axis as an input, negative from the back", "[kernels][dft]") {
  // x [1, 3, 12, 1]: the transform runs along the 12 (axis 2 == -2).
  const auto x = RandomFloats(36, 9);
  const Tensor xt = FloatTensor({1, 3, 12, 1}, x);
  exec::ExecOp op;
  op.op_type = "DFT";
  op.version = 20;
  op.inputs = {0, -1, 1};
  op.outputs = {2};
  auto kernel = exec::FindKernel("", "DFT");
  REQUIRE(kernel != nullptr);
  for (int64_t axis : {2, -2}) {
    const Tensor at = Int64Scalar(axis);
    std::vector<Tensor> outs(1);
    exec::KernelContext c(op, {&xt, nullptr, &at}, &outs);
    REQUIRE(kernel(c).ok());
    REQUIRE(outs[0].shape() == std::vector<int64_t>{1, 3, 12, 2});
    for (int64_t row = 0; row < 3; ++row) {
      std::vector<Cd> line(12);
      for (int64_t j = 0; j < 12; ++j) line[j] = x[row * 12 + j];
      const auto want = NaiveDft(line, false);
      for (int64_t k = 0; k < 12; ++k) {
        CHECK(outs[0].data<float>()[(row * 12 + k) * 2] == Approx(want[k].real()).margin(1e-5));
        CHECK(outs[0].data<float>()[(row * 12 + k) * 2 + 1] == Approx(want[k].imag()).margin(1e-5));
      }
    }
  }
  // The last dimension holds real and imaginary parts: it is no transform axis.
  const Tensor last = Int64Scalar(-1);
  std::vector<Tensor> outs(1);
  exec::KernelContext c(op, {&xt, nullptr, &last}, &outs);
  const Status s = kernel(c);
  CHECK_FALSE(s.ok());
  CHECK_THAT(s.message(), Catch::Contains("axis"));
}

TEST_CASE("DFT refuses a dft_length below 1 with an error", "[kernels][dft]") {
  ModelBuilder b;
  b.Input("x", {1, 8, 1}).Input("n", {}, onnx::TensorProto::INT64);
  b.Node("DFT", {"x", "n"}, {"y"}, {Attr("axis", int64_t{1})}).Output("y");
  const auto x = RandomFloats(8, 1);
  for (int64_t bad : {0, -3}) {
    auto y = RunModel(b, {{"x", FloatTensor({1, 8, 1}, x)}, {"n", Int64Scalar(bad)}});
    REQUIRE_FALSE(y.ok());
    CHECK_THAT(y.status().message(), Catch::Contains("dft_length"));
  }
  auto good = RunModel(b, {{"x", FloatTensor({1, 8, 1}, x)}, {"n", Int64Scalar(8)}});
  CHECK(good.ok());
}

TEST_CASE("STFT frames match a naive DFT of each windowed frame, and bad frames are refused",
          "[kernels][stft]") {
  // signal [1, 30, 1], frame_step 4, window of 10 -> 1 + (30 - 10) / 4 = 6 frames of 6 bins.
  ModelBuilder b;
  b.Input("x", {1, 30, 1})
      .Input("step", {}, onnx::TensorProto::INT64)
      .Input("w", {-1});  // any window length
  b.Node("STFT", {"x", "step", "w"}, {"y"}).Output("y");
  const auto x = RandomFloats(30, 4), w = RandomFloats(10, 8);
  auto y = RunModel(
      b,
      {{"x", FloatTensor({1, 30, 1}, x)}, {"step", Int64Scalar(4)}, {"w", FloatTensor({10}, w)}});
  REQUIRE(y.ok());
  REQUIRE((*y)[0].shape() == std::vector<int64_t>{1, 6, 6, 2});
  for (int64_t f = 0; f < 6; ++f) {
    std::vector<Cd> frame(10);
    for (int64_t j = 0; j < 10; ++j) frame[j] = static_cast<double>(x[f * 4 + j]) * w[j];
    const auto want = NaiveDft(frame, false);
    for (int64_t k = 0; k < 6; ++k) {
      CHECK((*y)[0].data<float>()[(f * 6 + k) * 2] == Approx(want[k].real()).margin(1e-5));
      CHECK((*y)[0].data<float>()[(f * 6 + k) * 2 + 1] == Approx(want[k].imag()).margin(1e-5));
    }
  }
  // A window longer than the signal, and a zero frame_step.
  auto long_window = RunModel(b, {{"x", FloatTensor({1, 30, 1}, x)},
                                  {"step", Int64Scalar(4)},
                                  {"w", FloatTensor({40}, RandomFloats(40, 2))}});
  REQUIRE_FALSE(long_window.ok());
  CHECK_THAT(long_window.status().message(), Catch::Contains("frame_length"));
  auto zero_step = RunModel(
      b,
      {{"x", FloatTensor({1, 30, 1}, x)}, {"step", Int64Scalar(0)}, {"w", FloatTensor({10}, w)}});
  REQUIRE_FALSE(zero_step.ok());
  CHECK_THAT(zero_step.status().message(), Catch::Contains("frame_step"));
}
