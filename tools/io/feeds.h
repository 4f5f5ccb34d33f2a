// Input feeds for `ortc run` and `ortc verify`: tensors from files (name=file), random tensors
// (seeded) for the rest, with optional shapes for dynamic dimensions (name=1x3x224x224).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ortc/runtime.h"

namespace ortc::io {

using Feeds = std::vector<std::pair<std::string, Tensor>>;

Result<Feeds> MakeFeeds(const std::vector<TensorInfo>& inputs,
                        const std::vector<std::string>& files,
                        const std::vector<std::string>& shapes, uint64_t seed);

}  // namespace ortc::io
