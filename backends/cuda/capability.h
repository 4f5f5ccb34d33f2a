// CUDA backend, compile side: the explicit capability table that decides which nodes it takes.
#pragma once

#include "backend.h"

namespace ortc::backends::cuda {

const Backend& CudaBackend();

}  // namespace ortc::backends::cuda
