// Plain host implementations of the CUDA program's library calls (ConvCall for cuDNN, GemmCall
// for cuBLASLt), written from the field comments of schemas/cuda_program.fbs.
#pragma once

#include <cstdint>

#include "cuda_program_generated.h"
#include "ortc/status.h"

namespace ortc::test::cuda {

// Element storage of one buffer: its ONNX element type (float, float16 or bfloat16).
struct StoredTensor {
  void* data = nullptr;
  int32_t dtype = 0;
  int64_t elements = 0;
};

// y = act(alpha * conv(x, w) + alpha2 * z + bias), fp32 accumulation, rounded once to y's type.
// Layout NHWC stores x, z, y channels-last and the filter KRSC (channels-last too).
Status ReferenceConv(const fb::cuda::ConvCall& c, const StoredTensor& x, const StoredTensor& w,
                     const StoredTensor* bias, const StoredTensor* z, const StoredTensor& y);

// Row-major y = epilogue(alpha * op(a) @ op(b) + beta * c + bias), batch strides in elements
// (0 broadcasts), c laid out like y, bias one value per output column; fp32 accumulation.
Status ReferenceGemm(const fb::cuda::GemmCall& g, const StoredTensor& a, const StoredTensor& b,
                     const StoredTensor* c, const StoredTensor* bias, const StoredTensor& y);

// Storage conversions shared with the interpreter (fp16/bf16 with round-to-nearest-even).
float LoadElement(const StoredTensor& t, int64_t i);
void StoreElement(const StoredTensor& t, int64_t i, float v);
bool IsFloatStorage(int32_t dtype);

}  // namespace ortc::test::cuda
