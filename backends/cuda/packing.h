// CUDA weight packing: float32 -> float16 / bfloat16 with round-to-nearest-even, and filter
// re-layout KCRS (ONNX) -> KRSC (NHWC convolutions). Pure byte transformations, tested bit
// for bit against independent references.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ortc::backends::cuda {

// IEEE binary16, round to nearest even; overflow to infinity, subnormals kept, NaN stays NaN.
uint16_t FloatToHalfBits(float f);
// bfloat16 (the upper 16 bits of binary32), round to nearest even; NaN stays NaN (quiet).
uint16_t FloatToBfloat16Bits(float f);

// Little-endian float32 bytes -> the same values as `dtype` (FLOAT16, BFLOAT16 or FLOAT).
std::string ConvertFloatBytes(const std::string& fp32_bytes, int32_t dtype);

// A filter [K, C, spatial...] stored row-major -> [K, spatial..., C]; `element_bytes` wide.
std::string PackFilterKcrsToKrsc(const std::string& bytes, const std::vector<int64_t>& dims,
                                 int element_bytes);

}  // namespace ortc::backends::cuda
