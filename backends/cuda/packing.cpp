// Bit-level float conversions and filter re-layout for the CUDA backend's weights.
#include "cuda/packing.h"

#include <onnx/onnx_pb.h>

#include <cstring>

namespace ortc::backends::cuda {

uint16_t FloatToHalfBits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // Inf or NaN: keep NaN a NaN (quiet bit set)
    return static_cast<uint16_t>(sign | 0x7c00u |
                                 (abs > 0x7f800000u ? 0x200u | ((abs >> 13) & 0x3ffu) : 0));
  }
  const int32_t exp = static_cast<int32_t>(abs >> 23) - 127 + 15;  // rebias
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00u);     // overflow -> Inf
  uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;               // with the implicit 1
  // Bits of the 24-bit significand dropped: 13 for normals, more for subnormals.
  int shift = 13;
  uint32_t biased = static_cast<uint32_t>(exp);
  if (exp <= 0) {
    shift = 14 - exp;
    if (shift > 24) return static_cast<uint16_t>(sign);  // below half the smallest subnormal
    biased = 0;
  } else {
    mantissa &= 0x7fffffu;
  }
  uint32_t half = mantissa >> shift;
  const uint32_t rest = mantissa & ((1u << shift) - 1);
  const uint32_t halfway = 1u << (shift - 1);
  uint32_t out = (biased << 10) + half;  // a carry out of the mantissa bumps the exponent
  if (rest > halfway || (rest == halfway && (half & 1u))) out += 1;
  return static_cast<uint16_t>(sign | out);
}

uint16_t FloatToBfloat16Bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  const uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;  // ties go to the even upper half; overflow rounds to Inf
  return static_cast<uint16_t>(x >> 16);
}

std::string ConvertFloatBytes(const std::string& fp32_bytes, int32_t dtype) {
  if (dtype == onnx::TensorProto::FLOAT) return fp32_bytes;
  const size_t n = fp32_bytes.size() / 4;
  std::string out(n * 2, '\0');
  for (size_t i = 0; i < n; ++i) {
    float f;
    std::memcpy(&f, fp32_bytes.data() + 4 * i, 4);
    const uint16_t h =
        dtype == onnx::TensorProto::BFLOAT16 ? FloatToBfloat16Bits(f) : FloatToHalfBits(f);
    std::memcpy(out.data() + 2 * i, &h, 2);
  }
  return out;
}

std::string PackFilterKcrsToKrsc(const std::string& bytes, const std::vector<int64_t>& dims,
                                 int element_bytes) {
  if (dims.size() < 2) return bytes;
  const int64_t k = dims[0], c = dims[1];
  int64_t spatial = 1;
  for (size_t i = 2; i < dims.size(); ++i) spatial *= dims[i];
  std::string out(bytes.size(), '\0');
  if (static_cast<int64_t>(bytes.size()) != k * c * spatial * element_bytes) return bytes;
  for (int64_t ki = 0; ki < k; ++ki) {
    for (int64_t ci = 0; ci < c; ++ci) {
      for (int64_t s = 0; s < spatial; ++s) {
        const int64_t from = (ki * c + ci) * spatial + s;
        const int64_t to = (ki * spatial + s) * c + ci;
        std::memcpy(out.data() + to * element_bytes, bytes.data() + from * element_bytes,
                    static_cast<size_t>(element_bytes));
      }
    }
  }
  return out;
}

}  // namespace ortc::backends::cuda
