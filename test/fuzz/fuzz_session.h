// What the model fuzz targets share: load a session from bytes and, when its inputs are small
// and of plain tensor types, run it once on zeros (the run reaches what loading only builds:
// the executor, kernels, the memory plan).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "ortc/runtime.h"

namespace ortc::fuzz {

// Runs only when every input has this few elements or fewer (dynamic dims taken as 1).
inline constexpr int64_t kMaxRunElements = 1 << 16;

inline void LoadAndRun(const uint8_t* data, size_t size, const SessionOptions& options) {
  auto session = Session::CreateFromBuffer(data, size, options);
  if (!session.ok()) return;
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const auto& in : (*session)->inputs()) {
    if (in.type != ValueType::kTensor || ElementSize(in.dtype) == 0) return;
    std::vector<int64_t> shape;
    int64_t elements = 1;
    for (int64_t d : in.shape) {
      shape.push_back(d < 0 ? 1 : d);
      if (shape.back() > 0 && elements > kMaxRunElements / shape.back()) return;
      elements *= shape.back();
    }
    feeds.emplace_back(in.name, Tensor::Allocate(in.dtype, shape));
  }
  (void)(*session)->Run(feeds);
}

// The folder named by the environment variable, or "" (the targets say which they read).
inline std::filesystem::path EnvPath(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::filesystem::path(v) : std::filesystem::path();
}

}  // namespace ortc::fuzz
