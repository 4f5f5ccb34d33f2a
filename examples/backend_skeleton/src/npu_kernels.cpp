// Host execution of the npu steps (see npu_kernels.h). The accumulator is 64-bit: an NPU's is
// 32-bit, but here a long reduction must not overflow into undefined behaviour. Index math is
// int64 throughout.
#include "npu_kernels.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace npu {
namespace {

// The activation minus its zero point, as integers: what the NPU's MAC array multiplies.
std::vector<int32_t> Centered(const void* x, int64_t count, bool is_signed, int32_t zero) {
  std::vector<int32_t> out(static_cast<size_t>(count));
  if (is_signed) {
    const auto* p = static_cast<const int8_t*>(x);
    for (int64_t i = 0; i < count; ++i) out[i] = p[i] - zero;
  } else {
    const auto* p = static_cast<const uint8_t*>(x);
    for (int64_t i = 0; i < count; ++i) out[i] = p[i] - zero;
  }
  return out;
}

void Store(void* y, int64_t index, int32_t value, bool is_signed) {
  if (is_signed)
    static_cast<int8_t*>(y)[index] = static_cast<int8_t>(value);
  else
    static_cast<uint8_t*>(y)[index] = static_cast<uint8_t>(value);
}

// Round half to even without depending on the floating-point rounding mode.
double RoundHalfEven(double v) {
  const double lower = std::floor(v);
  const double diff = v - lower;
  if (diff < 0.5) return lower;
  if (diff > 0.5) return lower + 1;
  return std::fmod(lower, 2.0) == 0 ? lower : lower + 1;
}

}  // namespace

int32_t Requantize(int64_t acc, int64_t bias, const StepQuant& q) {
  const double real = static_cast<double>(acc) * (q.sx * q.sw) + static_cast<double>(bias) * q.sb;
  const double lo = q.y_signed ? -128 : 0;
  const double hi = q.y_signed ? 127 : 255;
  // Clamp in double before converting: the quotient can be far outside int32.
  double v = RoundHalfEven(real / q.sy) + q.zy;
  v = v < lo ? lo : (v > hi ? hi : v);
  return static_cast<int32_t>(v);
}

void ConvQdq(const ConvShape& s, const StepQuant& q, const void* x, const int8_t* w,
             const int32_t* bias, void* y) {
  const std::vector<int32_t> xc = Centered(x, s.n * s.c * s.h * s.w, q.x_signed, q.zx);
  const int64_t sh = s.g.strides[0], sw = s.g.strides[1];
  const int64_t pt = s.g.pads[0], pl = s.g.pads[1];
  const int64_t dh = s.g.dilations[0], dw = s.g.dilations[1];
  int64_t out = 0;
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t m = 0; m < s.m; ++m)
      for (int64_t oy = 0; oy < s.oh; ++oy)
        for (int64_t ox = 0; ox < s.ow; ++ox, ++out) {
          int64_t acc = 0;
          for (int64_t c = 0; c < s.c; ++c) {
            const int32_t* plane = xc.data() + (n * s.c + c) * s.h * s.w;
            const int8_t* kernel = w + (m * s.c + c) * s.kh * s.kw;
            for (int64_t ky = 0; ky < s.kh; ++ky) {
              const int64_t iy = oy * sh - pt + ky * dh;
              if (iy < 0 || iy >= s.h) continue;  // padding: x equals its zero point there
              for (int64_t kx = 0; kx < s.kw; ++kx) {
                const int64_t ix = ox * sw - pl + kx * dw;
                if (ix < 0 || ix >= s.w) continue;
                acc += static_cast<int64_t>(plane[iy * s.w + ix]) * kernel[ky * s.kw + kx];
              }
            }
          }
          Store(y, out, Requantize(acc, bias ? bias[m] : 0, q), q.y_signed);
        }
}

void MatMulQdq(const MatMulShape& s, const StepQuant& q, const void* a, const int8_t* b, void* y) {
  const std::vector<int32_t> ac = Centered(a, s.batch * s.m * s.k, q.x_signed, q.zx);
  std::vector<int64_t> row(static_cast<size_t>(s.n));
  for (int64_t r = 0; r < s.batch * s.m; ++r) {
    std::fill(row.begin(), row.end(), 0);
    const int32_t* arow = ac.data() + r * s.k;
    for (int64_t k = 0; k < s.k; ++k) {
      const int8_t* brow = b + k * s.n;
      for (int64_t c = 0; c < s.n; ++c) row[c] += static_cast<int64_t>(arow[k]) * brow[c];
    }
    for (int64_t c = 0; c < s.n; ++c) Store(y, r * s.n + c, Requantize(row[c], 0, q), q.y_signed);
  }
}

}  // namespace npu
