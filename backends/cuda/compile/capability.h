// CUDA backend, compile side: which nodes it takes (capability.cpp) and the backend object
// (cuda_backend.cpp) the registry lists.
#pragma once

#include "backend.h"

namespace ortc::backends::cuda {

const Backend& CudaBackend();

// Exactly what the compile side can lower: library calls (Conv, ConvTranspose, MatMul, Gemm,
// foldable BatchNormalization), views, and ops the kernel generator covers; static shapes only.
NodeSupport CudaSupports(const graph::Graph& g, const graph::Node& node);

}  // namespace ortc::backends::cuda
