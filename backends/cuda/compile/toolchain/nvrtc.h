// NVRTC, reached through dlopen so the ortc binary starts on machines without CUDA: compiles a
// generated translation unit to a cubin per target architecture plus PTX for the newest.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ortc/status.h"

namespace ortc::backends::cuda::toolchain {

struct NvrtcInfo {
  int major = 0, minor = 0;  // nvrtcVersion()
  std::string library;       // the path dlopen resolved
};

// Loads libnvrtc once per process. Error (EP_FAIL, with the remedy) when absent.
Result<NvrtcInfo> LoadNvrtc();

struct ModuleImage {
  std::string target;  // "sm_80" (cubin) or "compute_90" (PTX)
  bool is_ptx = false;
  std::string bytes;
};

// One cubin per `cubin_archs` entry ("sm_80"...) and, when `ptx_arch` is not empty
// ("compute_90"), PTX for it. The error carries NVRTC's log. on_target, when given, hears of
// each target as its compile starts (seconds each): its name, the targets done, and how many.
Result<std::vector<ModuleImage>> CompileModule(
    const std::string& source, const std::vector<std::string>& cubin_archs,
    const std::string& ptx_arch,
    const std::function<void(const std::string& target, int done, int total)>& on_target = {});

// The architectures ortc compiles for when --target-arch is not given.
const std::vector<std::string>& DefaultTargetArchs();

}  // namespace ortc::backends::cuda::toolchain
