// Writes a small CUDA-compiled model by hand (context binary through the compiler's bundle
// writer, EPContext model through the typed node), so runtime tests need no CUDA compile: one
// graph y = x + 1 over float[4], as a copy into the arena and, when a module image is given,
// a kernel launch `add_one(arena, y)`.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "ortc/status.h"

namespace ortc::test {

struct CudaModelSpec {
  std::vector<std::pair<std::string, std::string>> versions = {
      {"cuda.toolkit", "13.0"}, {"cuda.nvrtc", "13.0"}, {"cuda.min_driver", "13000"}};
  std::vector<std::string> targets = {"sm_80", "compute_90"};
  // (target, image) per module, e.g. {"compute_80", ptx text}; none: the copy step only.
  std::vector<std::pair<std::string, std::string>> modules;
};

// Writes <dir>/add_one_ctx.onnx and <dir>/add_one_cuda.bin; returns the ctx model's path.
Result<std::filesystem::path> WriteCudaModel(const std::filesystem::path& dir,
                                             const CudaModelSpec& spec);

}  // namespace ortc::test
