// What a CUDA binary records about the software and hardware it was built for: toolkit,
// NVRTC, minimum driver, cuDNN and cuBLAS versions, target architectures, precision, layout.
#pragma once

#include "backend.h"
#include "cuda/options.h"

namespace ortc::backends::cuda {

BinaryIdentity CudaIdentity(const CudaOptions& options);

}  // namespace ortc::backends::cuda
