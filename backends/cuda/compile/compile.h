// CUDA compile of one partition group: lowering, kernel generation, NVRTC (a cubin per target
// arch plus PTX of the newest), and the serialized program with its artefacts.
#pragma once

#include "backend.h"
#include "cuda/compile/options.h"
#include "cuda/compile/plan.h"

namespace ortc::backends::cuda {

struct PlannedGraph {
  Plan plan;  // finished: kernels generated, memory placed; modules not yet compiled
  std::vector<codegen::KernelSource> kernels;
  std::vector<bundle::TensorDescSpec> inputs, outputs;  // the model's types
  std::map<std::string, int> stats;
};

// Everything but NVRTC and serialization (tests check plans with it).
Result<PlannedGraph> PlanCudaSubgraph(const graph::Model& model, const Subgraph& sg,
                                      const CudaOptions& options);

// NVRTC takes seconds per target architecture: progress hears of each one as it starts.
Result<CompiledGraph> CompileCudaSubgraph(const graph::Model& model, const Subgraph& sg,
                                          const CudaOptions& options,
                                          const CompileProgress& progress = {});

}  // namespace ortc::backends::cuda
