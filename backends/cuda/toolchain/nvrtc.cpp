// Scaffold: NVRTC loading comes with the code generator.
#include "cuda/toolchain/nvrtc.h"

namespace ortc::backends::cuda::toolchain {
Result<NvrtcInfo> LoadNvrtc() {
  return NotImplemented("NVRTC loading is not implemented yet");
}
Result<std::vector<ModuleImage>> CompileModule(const std::string&, const std::vector<std::string>&,
                                               const std::string&) {
  return NotImplemented("NVRTC compilation is not implemented yet");
}
const std::vector<std::string>& DefaultTargetArchs() {
  static const std::vector<std::string> archs = {"sm_80", "sm_86", "sm_89", "sm_90"};
  return archs;
}
}  // namespace ortc::backends::cuda::toolchain
