// Depthwise convolution (group == channels), the CPU kernel's row-wise path, against a direct
// sum written here, over strides, asymmetric pads and dilations where the valid column range of
// each tap differs.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "model_builder.h"
#include "ortc/runtime.h"

using namespace ortc;
using ortc::test::Attr;
using ortc::test::ModelBuilder;

TEST_CASE("depthwise Conv matches a direct sum", "[depthwise]") {
  const int64_t C = 3, H = 7, W = 9, K = 3;
  struct Form {
    int64_t sh, sw, dh, dw, pt, pl, pb, pr;
  };
  for (const Form f :
       {Form{1, 1, 1, 1, 1, 1, 1, 1}, Form{2, 2, 1, 1, 1, 1, 2, 1}, Form{2, 2, 1, 1, 1, 0, 2, 1},
        Form{1, 2, 2, 2, 0, 2, 1, 0}, Form{1, 1, 1, 3, 0, 0, 0, 0}}) {
    std::vector<float> x(C * H * W), w(C * K * K), b(C);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * i);
    for (size_t i = 0; i < w.size(); ++i) w[i] = std::cos(0.53f * i);
    for (size_t i = 0; i < b.size(); ++i) b[i] = 0.1f * i - 0.1f;
    ModelBuilder m;
    m.Input("x", {1, C, H, W}).Initializer("w", {C, 1, K, K}, w).Initializer("b", {C}, b);
    m.Node("Conv", {"x", "w", "b"}, {"y"},
           {Attr("group", C), Attr("strides", std::vector<int64_t>{f.sh, f.sw}),
            Attr("dilations", std::vector<int64_t>{f.dh, f.dw}),
            Attr("pads", std::vector<int64_t>{f.pt, f.pl, f.pb, f.pr})});
    m.Output("y");
    const std::string bytes = m.Serialize();
    auto session =
        Session::CreateFromBuffer({reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()});
    REQUIRE(session.ok());
    auto out = (*session)->Run(
        {{"x", Tensor::FromBytes(DataType::kFloat, {1, C, H, W}, x.data(), x.size() * 4)}});
    REQUIRE(out.ok());
    const int64_t OH = (H + f.pt + f.pb - f.dh * (K - 1) - 1) / f.sh + 1;
    const int64_t OW = (W + f.pl + f.pr - f.dw * (K - 1) - 1) / f.sw + 1;
    REQUIRE((*out)[0].shape() == std::vector<int64_t>{1, C, OH, OW});
    const float* y = (*out)[0].data<float>();
    for (int64_t c = 0; c < C; ++c)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double want = b[c];
          for (int64_t kh = 0; kh < K; ++kh)
            for (int64_t kw = 0; kw < K; ++kw) {
              const int64_t ih = oh * f.sh - f.pt + kh * f.dh, iw = ow * f.sw - f.pl + kw * f.dw;
              if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                want += double(x[(c * H + ih) * W + iw]) * w[(c * K + kh) * K + kw];
            }
          INFO("form strides " << f.sh << "x" << f.sw << " at " << c << "," << oh << "," << ow);
          CHECK(y[(c * OH + oh) * OW + ow] == Approx(want).margin(1e-5));
        }
  }
}
