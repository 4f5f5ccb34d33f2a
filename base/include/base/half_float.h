// IEEE binary16 (float16) and bfloat16 values, stored as uint16, to and from float: the CPU
// kernels, constant folding and the CUDA backend's weight packing convert the same way.
#pragma once

#include <cstdint>
#include <cstring>

namespace ortc::exec {

// Round to nearest even; NaN stays NaN, overflow becomes infinity, subnormals are kept.
float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);
inline float Bf16ToFloat(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint16_t FloatToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffff) > 0x7f800000) return 0x7fc0;  // NaN
  u += 0x7fff + ((u >> 16) & 1);                     // round to nearest even
  return static_cast<uint16_t>(u >> 16);
}

}  // namespace ortc::exec
