// The vectorised float functions (vector_math.h) against double-precision references over
// their whole range, at array lengths that exercise the vector loops' remainders, and at the
// special values (NaN, infinities, signed zeros, subnormal results): every compiled variant this
// CPU runs (AVX-512, AVX2, the baseline), since another machine may pick another.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "cpu/runtime/kernels/vector_math.h"

using namespace ortc::exec;

namespace {

using ArrayFn = std::function<void(const float*, float*, int64_t)>;

// Every 0.0007 from -120 to 100, then densely around zero.
std::vector<float> Sweep() {
  std::vector<float> x;
  for (float v = -120.0f; v <= 100.0f; v += 0.0007f) x.push_back(v);
  for (float v = -1e-3f; v <= 1e-3f; v += 1e-7f) x.push_back(v);
  return x;
}

std::vector<float> Apply(ArrayFn f, const std::vector<float>& x) {
  std::vector<float> y(x.size());
  f(x.data(), y.data(), static_cast<int64_t>(x.size()));
  return y;
}

// Worst |y - ref| / max(|ref|, floor) over the sweep, for references float can represent
// (finite after rounding to float, and above `floor`, below which results are subnormal).
template <typename Ref>
double WorstRelative(ArrayFn f, Ref ref, double floor) {
  const auto x = Sweep();
  const auto y = Apply(f, x);
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double r = ref(static_cast<double>(x[i]));
    if (std::isinf(static_cast<float>(r)) || std::fabs(r) < floor) continue;
    worst = std::max(worst, std::fabs(y[i] - r) / std::fabs(r));
  }
  return worst;
}

double Gelu(double v) {
  return 0.5 * v * std::erfc(-v / std::sqrt(2.0));
}
double GeluTanh(double v) {
  return v / (1 + std::exp(-2 * std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
}
ArrayFn GeluErf(const VectorMathVariant& v) {
  return [&v](const float* x, float* y, int64_t n) { v.gelu(x, y, n, false); };
}
ArrayFn GeluTanhForm(const VectorMathVariant& v) {
  return [&v](const float* x, float* y, int64_t n) { v.gelu(x, y, n, true); };
}

}  // namespace

TEST_CASE("vectorised exp, sigmoid, tanh and erf are within a few ulp of double", "[kernels]") {
  for (const VectorMathVariant& v : RunnableVectorMathVariants()) {
    INFO("variant " << v.isa);
    CHECK(WorstRelative(
              v.exp, [](double t) { return std::exp(t); }, 1e-37) < 2.5e-7);
    CHECK(WorstRelative(
              v.sigmoid, [](double t) { return 1 / (1 + std::exp(-t)); }, 1e-37) < 2.5e-7);
    CHECK(WorstRelative(
              v.tanh, [](double t) { return std::tanh(t); }, 1e-37) < 3e-7);
    CHECK(WorstRelative(
              v.erf, [](double t) { return std::erf(t); }, 1e-37) < 3e-7);
    // GELU keeps its relative accuracy into the negative tail, where 1 + erf(x / sqrt 2) would
    // cancel: erfc is computed directly there, and the tanh form as x * sigmoid(2u).
    CHECK(WorstRelative(GeluErf(v), Gelu, 1e-20) < 2e-5);
    CHECK(WorstRelative(GeluTanhForm(v), GeluTanh, 1e-20) < 2e-5);
  }
}

TEST_CASE("vectorised GELU is accurate where activations live", "[kernels]") {
  std::vector<float> x;
  for (float t = -6.0f; t <= 6.0f; t += 0.001f) x.push_back(t);
  for (const VectorMathVariant& v : RunnableVectorMathVariants()) {
    INFO("variant " << v.isa);
    const auto erf_form = Apply(GeluErf(v), x);
    const auto tanh_form = Apply(GeluTanhForm(v), x);
    double worst_erf = 0, worst_tanh = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      worst_erf =
          std::max(worst_erf, std::fabs(erf_form[i] - Gelu(x[i])) / (1e-7 + std::fabs(Gelu(x[i]))));
      worst_tanh = std::max(worst_tanh, std::fabs(tanh_form[i] - GeluTanh(x[i])) /
                                            (1e-7 + std::fabs(GeluTanh(x[i]))));
    }
    // About 1.6e-6 at worst: on the negative side the result's relative error is the float
    // rounding of the inner argument (x / sqrt 2, or 2u) times the steepness of the tail, as it
    // is for the exporters' own op-by-op spelling of GELU in float.
    CHECK(worst_erf < 4e-6);
    CHECK(worst_tanh < 4e-6);
  }
}

TEST_CASE("vectorised functions handle NaN, infinities and signed zeros", "[kernels]") {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {std::nanf(""), inf, -inf, 0.0f, -0.0f, 89.0f, -110.0f};
  for (const VectorMathVariant& v : RunnableVectorMathVariants()) {
    INFO("variant " << v.isa);
    const auto e = Apply(v.exp, x);
    CHECK(std::isnan(e[0]));
    CHECK(e[1] == inf);
    CHECK(e[2] == 0.0f);
    CHECK(e[3] == 1.0f);
    CHECK(e[4] == 1.0f);
    CHECK(e[5] == inf);  // e^89 is above FLT_MAX
    CHECK(e[6] == 0.0f);
    const auto s = Apply(v.sigmoid, x);
    CHECK(std::isnan(s[0]));
    CHECK(s[1] == 1.0f);
    CHECK(s[2] == 0.0f);
    CHECK(s[3] == 0.5f);
    const auto t = Apply(v.tanh, x);
    CHECK(std::isnan(t[0]));
    CHECK(t[1] == 1.0f);
    CHECK(t[2] == -1.0f);
    CHECK((t[4] == 0.0f && std::signbit(t[4])));
    const auto r = Apply(v.erf, x);
    CHECK(std::isnan(r[0]));
    CHECK(r[1] == 1.0f);
    CHECK(r[2] == -1.0f);
    CHECK((r[4] == 0.0f && std::signbit(r[4])));
    const auto g = Apply(GeluErf(v), x);
    CHECK(std::isnan(g[0]));
    CHECK(g[1] == inf);
    CHECK(g[3] == 0.0f);
  }
}

TEST_CASE("every array length gives the element-by-element results", "[kernels]") {
  // Lengths around the vector widths (4, 8, 16 floats): the vector body and its remainder loop
  // agree with a one-element call (to rounding: one may contract a multiply-add the other
  // does not), and nothing past n is written.
  std::vector<float> x;
  for (int i = 0; i < 37; ++i) x.push_back(-3.0f + 0.17f * static_cast<float>(i));
  for (const VectorMathVariant& v : RunnableVectorMathVariants()) {
    INFO("variant " << v.isa);
    for (const ArrayFn& f : {ArrayFn(v.exp), ArrayFn(v.sigmoid), ArrayFn(v.tanh), ArrayFn(v.erf)}) {
      std::vector<float> one(x.size());
      for (size_t i = 0; i < x.size(); ++i) f(&x[i], &one[i], 1);
      for (int64_t n : {1, 3, 7, 8, 15, 16, 17, 33, 36}) {
        std::vector<float> y(x.size(), 42.0f);
        f(x.data(), y.data(), n);
        for (int64_t i = 0; i < n; ++i) CHECK(y[i] == Approx(one[i]).epsilon(1e-6).margin(1e-30));
        CHECK(y[n] == 42.0f);
      }
    }
  }
}

TEST_CASE("the functions run the widest variant this CPU runs", "[kernels]") {
  const auto variants = RunnableVectorMathVariants();
  REQUIRE(!variants.empty());
  CHECK(std::string(variants.back().isa) == "baseline");
  std::vector<float> x = {-1.5f, 0.25f, 3.0f}, a(3), b(3);
  ErfArray(x.data(), a.data(), 3);
  variants.front().erf(x.data(), b.data(), 3);
  CHECK(a == b);
}

TEST_CASE("a softmax row of every variant matches the double-precision definition", "[kernels]") {
  // Lengths around the vector widths and a vocabulary-sized row; masked entries (float lowest,
  // -inf) give 0; a NaN anywhere, or a row with nothing but -inf, gives NaN everywhere (as
  // exp(x - max) does); nothing past n is written.
  for (const VectorMathVariant& v : RunnableVectorMathVariants()) {
    INFO("variant " << v.isa);
    for (int64_t n : {1, 5, 8, 15, 16, 17, 33, 64, 512, 6625}) {
      INFO(n << " elements");
      std::vector<float> x(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i)
        x[i] = i % 7 == 3 ? -std::numeric_limits<float>::max()
                          : static_cast<float>((i * 37) % 101) * 0.13f - 6.0f;
      if (n == 64)  // up to 189: exp overflows unless the true maximum is subtracted
        for (int64_t i = 0; i < n; ++i) x[i] = 3.0f * static_cast<float>(i);
      if (n > 4) x[4] = -std::numeric_limits<float>::infinity();
      std::vector<float> y(static_cast<size_t>(n) + 1, 42.0f);
      v.softmax_row(x.data(), y.data(), n);
      double peak = -std::numeric_limits<double>::infinity(), sum = 0;
      for (float f : x) peak = std::max(peak, double{f});
      for (float f : x) sum += std::exp(double{f} - peak);
      double worst = 0;
      for (int64_t i = 0; i < n; ++i) {
        const double err = std::fabs(y[i] - std::exp(double{x[i]} - peak) / sum);
        if (!(err <= worst)) worst = err;  // a NaN is kept, and fails below
      }
      CHECK(worst < 1e-7);
      CHECK(y[n] == 42.0f);
    }
    std::vector<float> x(40, 1.0f), y(40);
    x[37] = std::numeric_limits<float>::quiet_NaN();
    v.softmax_row(x.data(), y.data(), 40);
    for (float f : y) CHECK(std::isnan(f));
    std::fill(x.begin(), x.end(), -std::numeric_limits<float>::infinity());
    v.softmax_row(x.data(), y.data(), 40);
    for (float f : y) CHECK(std::isnan(f));
  }
}
