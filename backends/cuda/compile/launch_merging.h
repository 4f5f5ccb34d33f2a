// Runs of consecutive kernel steps that touch no common memory, each run one launch
// (codegen/merged_kernels.h): a CUDA graph replays fewer kernels, and the device overlaps
// small kernels (a query's and a key's rotary embedding, a cache update beside a rotation)
// that would each have waited for the one before.
#pragma once

#include <vector>

#include "cuda/compile/plan.h"

namespace ortc::backends::cuda {

// Merges, in `plan` and `sources` (the kernels in step order, as GenerateKernels made them),
// every run of two or more consecutive launch steps of one block shape whose kernels can share
// a launch (codegen::SharedLaunchRefusal) and of which none writes memory another reads or
// writes. Steps with a tunable choice are left alone (`ortc tune` times them one by one). Runs
// before FinalizePlan, whose lifetimes then see one step. Returns how many launches went away.
Result<int> MergeIndependentLaunches(Plan* plan, std::vector<codegen::KernelSource>* sources);

}  // namespace ortc::backends::cuda
