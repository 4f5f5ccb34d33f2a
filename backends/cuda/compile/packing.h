// CUDA weight packing: float32 -> float16 / bfloat16 with round-to-nearest-even
// (base/half_float.h's conversions, which the CPU kernels use too, so compiler and CPU kernels
// round alike), and filter re-layout KCRS (ONNX) -> KRSC (NHWC convolutions) or CRSK (generated
// grouped convolutions). Pure byte transformations, tested bit for bit against independent
// references.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ortc::backends::cuda {

// Little-endian float32 bytes -> the same values as `dtype` (FLOAT16, BFLOAT16 or FLOAT).
std::string ConvertFloatBytes(const std::string& fp32_bytes, int32_t dtype);

// A filter [K, C, spatial...] stored row-major -> [K, spatial..., C]; `element_bytes` wide.
std::string PackFilterKcrsToKrsc(const std::string& bytes, const std::vector<int64_t>& dims,
                                 int element_bytes);

// A filter [K, C, spatial...] stored row-major -> [C, spatial..., K] (filters innermost: the
// generated grouped convolution's threads, one filter each, read adjacent elements).
std::string PackFilterKcrsToCrsk(const std::string& bytes, const std::vector<int64_t>& dims,
                                 int element_bytes);

}  // namespace ortc::backends::cuda
