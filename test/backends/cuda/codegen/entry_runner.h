// Runs one catalog entry both ways: its generated kernel through the host shim, and the CPU
// runtime kernels (in float32 for fp16/bf16 tensors, on the same rounded inputs); compares.
// A channels-last op (OpDesc layouts) or fused group (FusedGroup layouts) gets each NHWC input
// transposed from the NCHW test input and each NHWC output transposed back before comparing.
#pragma once

#include <string>
#include <vector>

#include "catalog.h"
#include "host_module.h"

namespace ortc::test::cuda {

struct EntryCheck {
  std::string skipped;   // why the CPU comparison was not made ("" when it was)
  std::string mismatch;  // first differences ("" when all elements agree)
  int64_t elements = 0;  // output elements compared
};

// The bytes the entry's kernel reads, drawn from `seed` as CheckEntry draws them (constants,
// given values, random values in the entry's ranges; channels-last inputs stored so).
std::vector<std::string> EntryInputBytes(const CatalogEntry& entry, unsigned seed);

// Random inputs from `seed`; the kernel must be in `module`.
Result<EntryCheck> CheckEntry(const CatalogEntry& entry, const cg::KernelSource& kernel,
                              const HostModule& module, unsigned seed);

}  // namespace ortc::test::cuda
