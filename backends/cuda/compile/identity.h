// What a CUDA binary records about the software and hardware it was built for: toolkit,
// NVRTC, minimum driver, cuDNN and cuBLAS versions, target architectures, precision, layout.
#pragma once

#include "backend.h"
#include "cuda/compile/options.h"

namespace ortc::backends::cuda {

// Toolkit, NVRTC, minimum driver, precision, layout and targets: true of every graph.
BinaryIdentity CudaIdentity(const CudaOptions& options);
// cuDNN / cuBLAS versions, for the graphs that call those libraries (the runtime then requires
// them; a binary of generated kernels only runs without either).
std::vector<std::pair<std::string, std::string>> LibraryVersions(bool calls_cudnn,
                                                                 bool calls_cublas);

}  // namespace ortc::backends::cuda
