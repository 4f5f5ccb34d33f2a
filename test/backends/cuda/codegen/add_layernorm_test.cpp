// AddLayerNormalization (LayerNorm of x + skip, formed by lowering) through the host shim
// against a float64 reference, with and without the stored sum, and its refusals.
#include <cmath>
#include <random>

#include "data_movement_test_util.h"

namespace ortc::test::cuda {
namespace {

std::vector<float> Random(size_t n, unsigned seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

TEST_CASE("AddLayerNormalization normalizes x + skip and stores the sum", "[cuda][layernorm]") {
  const int64_t rows = 6, dim = 300;  // a row longer than a block: threads loop
  const auto x = Random(rows * dim, 1, -2, 2), skip = Random(rows * dim, 2, -1, 3),
             scale = Random(dim, 3, 0.5f, 1.5f), bias = Random(dim, 4, -0.5f, 0.5f);
  const float eps = 1e-5f;
  for (bool with_sum : {true, false}) {
    std::vector<cg::TensorDesc> outs = {T(F, {2, 3, dim})};
    if (with_sum) outs.push_back(T(F, {2, 3, dim}));
    auto op = Op("AddLayerNormalization", 1,
                 {T(F, {2, 3, dim}), T(F, {2, 3, dim}), T(F, {dim}), T(F, {dim})}, outs,
                 {AttrInt("axis", -1), AttrFloat("epsilon", eps)});
    op.constants.resize(4);
    const auto got = RunKernel(op, with_sum ? "addln_sum" : "addln_nosum",
                               {Floats(x), Floats(skip), Floats(scale), Floats(bias)});
    REQUIRE(got.size() == (with_sum ? 2u : 1u));
    const auto y = AsFloats(got[0]);
    double worst = 0, worst_sum = 0;
    for (int64_t r = 0; r < rows; ++r) {
      double mean = 0, var = 0;
      for (int64_t k = 0; k < dim; ++k) mean += double(x[r * dim + k]) + skip[r * dim + k];
      mean /= dim;
      for (int64_t k = 0; k < dim; ++k) {
        const double d = double(x[r * dim + k]) + skip[r * dim + k] - mean;
        var += d * d;
      }
      var /= dim;
      for (int64_t k = 0; k < dim; ++k) {
        const double s = double(x[r * dim + k]) + skip[r * dim + k];
        const double want = (s - mean) / std::sqrt(var + eps) * scale[k] + bias[k];
        worst = std::max(worst, std::fabs(y[r * dim + k] - want));
        if (with_sum) worst_sum = std::max(worst_sum, std::fabs(AsFloats(got[1])[r * dim + k] - s));
      }
    }
    CHECK(worst < 1e-5);
    CHECK(worst_sum < 1e-6);
  }
}

TEST_CASE("AddLayerNormalization refusals name their reason", "[cuda][layernorm]") {
  auto shapes = Op("AddLayerNormalization", 1, {T(F, {2, 8}), T(F, {1, 8}), T(F, {8}), T(F, {8})},
                   {T(F, {2, 8})});
  CHECK_THAT(cg::Unsupported(shapes), Catch::Contains("x and skip differ"));
  auto scale = Op("AddLayerNormalization", 1, {T(F, {2, 8}), T(F, {2, 8}), T(F, {4}), T(F, {8})},
                  {T(F, {2, 8})});
  CHECK_THAT(cg::Unsupported(scale), Catch::Contains("scale/bias"));
}

}  // namespace
}  // namespace ortc::test::cuda
