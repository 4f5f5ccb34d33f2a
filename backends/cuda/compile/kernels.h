// Code generation for a lowered plan: every kernel step's request becomes a generated kernel
// (name, launch geometry, the pointer arguments it takes).
#pragma once

#include <vector>

#include "cuda/compile/plan.h"

namespace ortc::backends::cuda {

// Fills each launch step and plan->kernels; `sources` receives the kernels in step order.
Status GenerateKernels(Plan* plan, std::vector<codegen::KernelSource>* sources);

}  // namespace ortc::backends::cuda
