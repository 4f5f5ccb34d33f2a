// Which module image of a program this device runs: the cubin built for its SM, else a cubin of
// the same major and a lower minor (binary compatible), else PTX for an arch not newer than the
// device (JIT-compiled by the driver). Pure, so it is tested without a GPU.
#pragma once

#include <string>
#include <vector>

namespace ortc::cuda_rt {

struct ModuleRef {
  std::string target;  // "sm_86" or "compute_90"
  bool ptx = false;
};

struct ModuleChoice {
  int index = -1;      // into the program's modules; -1 when none fits
  bool jit = false;    // PTX
  std::string reason;  // for -1: both sides named
};

ModuleChoice SelectModule(const std::vector<ModuleRef>& modules, int device_sm);

}  // namespace ortc::cuda_rt
