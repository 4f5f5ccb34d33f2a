// CUDA compile of one partition group: lowering, kernel generation, NVRTC (a cubin per target
// arch plus PTX of the newest), and the serialized program with its artefacts.
#pragma once

#include "backend.h"
#include "cuda/options.h"

namespace ortc::backends::cuda {

Result<CompiledGraph> CompileCudaSubgraph(const graph::Model& model, const Subgraph& sg,
                                          const CudaOptions& options);

}  // namespace ortc::backends::cuda
