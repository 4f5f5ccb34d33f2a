// Independent fp16/bf16 conversions for tests: half through the compiler's _Float16, bfloat16 by
// comparing exact distances to the two neighbouring bfloat16 values in double.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace ortc::test::cuda {

inline uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float BitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline uint16_t RefFloatToHalf(float f) {
  const _Float16 h = static_cast<_Float16>(f);
  uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
}
inline float RefHalfToFloat(uint16_t u) {
  _Float16 h;
  std::memcpy(&h, &u, 2);
  return static_cast<float>(h);
}

// The value of non-negative bfloat16 bits, also for the pattern one past the largest finite
// value (0x7f80 read as 2^128), which rounding needs as the "upper neighbour".
inline double Bf16Magnitude(uint32_t bits) {
  const uint32_t e = bits >> 7, m = bits & 0x7f;
  return e == 0 ? std::ldexp(static_cast<double>(m), -133)
                : std::ldexp(static_cast<double>(128 + m), static_cast<int>(e) - 134);
}

inline uint16_t RefFloatToBf16(float f) {
  const uint32_t x = FloatBits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  if (std::isnan(f)) return static_cast<uint16_t>((x >> 16) | 0x40);  // quiet NaN, same sign
  if (std::isinf(f)) return static_cast<uint16_t>(sign | 0x7f80);
  const double a = std::fabs(static_cast<double>(f));
  const uint32_t lo = (x & 0x7fffffff) >> 16;  // truncated magnitude
  const double dlo = a - Bf16Magnitude(lo), dhi = Bf16Magnitude(lo + 1) - a;
  uint32_t pick = lo;
  if (dhi < dlo || (dhi == dlo && (lo & 1))) pick = lo + 1;
  return static_cast<uint16_t>(sign | pick);
}
inline float RefBf16ToFloat(uint16_t b) {
  const double m = Bf16Magnitude(b & 0x7fff);
  if ((b & 0x7f80) == 0x7f80) return BitsFloat(static_cast<uint32_t>(b) << 16);  // Inf/NaN
  return static_cast<float>((b & 0x8000) ? -m : m);
}

}  // namespace ortc::test::cuda
