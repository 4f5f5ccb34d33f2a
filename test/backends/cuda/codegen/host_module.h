// Runs generated CUDA kernels on the host: the translation unit (prelude + kernels, the text
// NVRTC compiles) is built as a shared object with host_shim.h and launched by kernel name.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cuda/compile/codegen/kernel_codegen.h"
#include "ortc/status.h"

namespace ortc::test::cuda {

class HostModule {
 public:
  // Compiles TranslationUnit(kernels) with the C++ compiler that built the tests, into a shared
  // object cached in the build tree by content hash, and loads it.
  static Result<HostModule> Compile(
      const std::vector<backends::cuda::codegen::KernelSource>& kernels);
  // Same, for a hand-written translation unit whose kernels are described by `kernels`.
  static Result<HostModule> CompileText(
      const std::string& tu, const std::vector<backends::cuda::codegen::KernelSource>& kernels);

  // Runs the kernel with its launch configuration. `args` are host pointers: one per kernel
  // input, then one per output (nullptr for an omitted optional input).
  Status Launch(const backends::cuda::codegen::KernelSource& kernel,
                const std::vector<void*>& args) const;

  const std::string& library_path() const { return path_; }

 private:
  std::shared_ptr<void> handle_;  // dlclose on release
  std::string path_;
};

}  // namespace ortc::test::cuda
