// Independent kernels sharing one launch: each part runs on its own range of the grid's blocks
// (part 0 on the first blocks, part 1 on the next...), as if it had been launched alone. A graph
// replays one kernel where it replayed several, and the device overlaps the parts' work.
#pragma once

#include <string>
#include <vector>

#include "cuda/compile/codegen/kernel_codegen.h"

namespace ortc::backends::cuda::codegen {

// Why `k` cannot share a launch ("" when it can): it needs a one-dimensional grid, no shared
// memory (so no part reserves memory or waits at a barrier for another), and one entry point
// whose body alone reads the block's index and the grid's size.
std::string SharedLaunchRefusal(const KernelSource& k);

// One kernel named `name` running `parts` (at least two, each accepted by SharedLaunchRefusal,
// all with one block shape): its inputs are every part's inputs in order, then every part's
// outputs; grid x is the sum of the parts'. same_index pairs keep their meaning.
Result<KernelSource> MergeKernels(const std::string& name, const std::vector<KernelSource>& parts);

}  // namespace ortc::backends::cuda::codegen
