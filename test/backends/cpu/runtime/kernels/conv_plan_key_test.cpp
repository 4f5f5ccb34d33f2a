// Conv keeps its oneDNN plans per shapes of x, the weights and the bias: weights and bias fed as
// graph inputs may change shape from run to run at the same x, and a plan made for other
// weights would read past them (it used to be found by x's shape alone). A bias whose length is
// not the output channel count is an error, not a read past it.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "model_builder.h"
#include "ortc/runtime.h"

using namespace ortc;
using ortc::test::ModelBuilder;

namespace {

constexpr int64_t kC = 4, kH = 6, kW = 6, kOut = 4;  // 3x3, no padding: 4x4 outputs

std::vector<float> Pattern(size_t n, float scale, float phase) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(phase + 0.37f * static_cast<float>(i));
  return v;
}

// y = conv(x, w) + b over 1 x kC x kH x kW, k output channels, computed here.
std::vector<float> Expected(const std::vector<float>& x, const std::vector<float>& w,
                            const std::vector<float>& b, int64_t k) {
  std::vector<float> y(k * kOut * kOut);
  for (int64_t m = 0; m < k; ++m)
    for (int64_t oh = 0; oh < kOut; ++oh)
      for (int64_t ow = 0; ow < kOut; ++ow) {
        double sum = b[m];
        for (int64_t c = 0; c < kC; ++c)
          for (int64_t i = 0; i < 3; ++i)
            for (int64_t j = 0; j < 3; ++j)
              sum += double(x[(c * kH + oh + i) * kW + ow + j]) * w[((m * kC + c) * 3 + i) * 3 + j];
        y[(m * kOut + oh) * kOut + ow] = static_cast<float>(sum);
      }
  return y;
}

}  // namespace

TEST_CASE("Conv with weights and bias as inputs follows their shapes from run to run",
          "[conv_plan_key]") {
  ModelBuilder m;
  m.Input("x", {1, kC, kH, kW}).Input("w", {-1, kC, 3, 3}).Input("b", {-1});
  m.Node("Conv", {"x", "w", "b"}, {"y"}).Output("y");
  const std::string bytes = m.Serialize();
  auto session =
      Session::CreateFromBuffer({reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()});
  REQUIRE(session.ok());
  const std::vector<float> x = Pattern(kC * kH * kW, 1.f, 0.f);
  for (int64_t k : {2, 8, 2}) {
    const std::vector<float> w = Pattern(k * kC * 9, 0.2f, 1.f), b = Pattern(k, 0.5f, 2.f);
    auto out = (*session)->Run(
        {{"x", Tensor::FromBytes(DataType::kFloat, {1, kC, kH, kW}, x.data(), x.size() * 4)},
         {"w", Tensor::FromBytes(DataType::kFloat, {k, kC, 3, 3}, w.data(), w.size() * 4)},
         {"b", Tensor::FromBytes(DataType::kFloat, {k}, b.data(), b.size() * 4)}});
    INFO(k << " output channels");
    REQUIRE(out.ok());
    const Tensor& y = out->at(0);
    REQUIRE(y.shape() == std::vector<int64_t>{1, k, kOut, kOut});
    const std::vector<float> want = Expected(x, w, b, k);
    const float* got = y.data<float>();
    for (size_t i = 0; i < want.size(); ++i) REQUIRE(got[i] == Approx(want[i]).margin(1e-4));
  }
  // A bias shorter than the output channels is refused, before and after a plan exists.
  const std::vector<float> w = Pattern(8 * kC * 9, 0.2f, 1.f), short_b(3, 1.f);
  auto refused = (*session)->Run(
      {{"x", Tensor::FromBytes(DataType::kFloat, {1, kC, kH, kW}, x.data(), x.size() * 4)},
       {"w", Tensor::FromBytes(DataType::kFloat, {8, kC, 3, 3}, w.data(), w.size() * 4)},
       {"b", Tensor::FromBytes(DataType::kFloat, {3}, short_b.data(), short_b.size() * 4)}});
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.status().message(), Catch::Contains("Conv bias must have 8 elements"));
}
