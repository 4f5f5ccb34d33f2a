// The float reference: plain loops in double, rounding through std::nearbyint (main checks the
// rounding mode is to-nearest, so halves go to even).
#include "reference.h"

#include <algorithm>
#include <cmath>

namespace npu_test {

int32_t QuantizeRef(double real, const Quant& q) {
  const double lo = q.is_signed ? -128 : 0, hi = q.is_signed ? 127 : 255;
  const double v = std::nearbyint(real / q.scale) + q.zero;
  return static_cast<int32_t>(std::min(hi, std::max(lo, v)));
}

std::vector<int32_t> Ints32(const std::string& bytes, bool is_signed) {
  std::vector<int32_t> out;
  for (const char c : bytes)
    out.push_back(is_signed ? static_cast<int8_t>(c) : static_cast<uint8_t>(c));
  return out;
}

std::vector<int32_t> ConvRef(const ConvSpec& s, const std::vector<int32_t>& x, const Quant& qx,
                             const std::vector<int8_t>& w, double sw, const std::vector<int32_t>& b,
                             double sb, const Quant& qy) {
  std::vector<int32_t> y;
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t m = 0; m < s.m; ++m)
      for (int64_t oy = 0; oy < s.oh(); ++oy)
        for (int64_t ox = 0; ox < s.ow(); ++ox) {
          double sum = b.empty() ? 0.0 : b[m] * sb;
          for (int64_t c = 0; c < s.c; ++c)
            for (int64_t ky = 0; ky < s.kh; ++ky)
              for (int64_t kx = 0; kx < s.kw; ++kx) {
                const int64_t iy = oy * s.strides[0] - s.pads[0] + ky * s.dilations[0];
                const int64_t ix = ox * s.strides[1] - s.pads[1] + kx * s.dilations[1];
                if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
                const double xf = (x[((n * s.c + c) * s.h + iy) * s.w + ix] - qx.zero) * qx.scale;
                const double wf = w[((m * s.c + c) * s.kh + ky) * s.kw + kx] * sw;
                sum += xf * wf;
              }
          y.push_back(QuantizeRef(sum, qy));
        }
  return y;
}

std::vector<int32_t> MatMulRef(int64_t rows, int64_t k, int64_t cols, const std::vector<int32_t>& a,
                               const Quant& qa, const std::vector<int8_t>& b, double sb,
                               const Quant& qy) {
  std::vector<int32_t> y;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      double sum = 0;
      for (int64_t i = 0; i < k; ++i)
        sum += (a[r * k + i] - qa.zero) * qa.scale * (b[i * cols + c] * sb);
      y.push_back(QuantizeRef(sum, qy));
    }
  return y;
}

}  // namespace npu_test
