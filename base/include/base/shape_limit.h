// The bound every tensor's shape keeps, so that index arithmetic over any shape (strides,
// products of leading or trailing dimensions) cannot overflow int64.
#pragma once

#include <cstdint>
#include <vector>

namespace ortc::exec {

// The most elements one tensor may have. Kernels also bound sizes taken from their inputs by it
// before multiplying or adding them.
inline constexpr int64_t kMaxTensorElements = int64_t{1} << 40;

// True when no dimension is negative and the product of the non-zero dimensions is at most
// kMaxTensorElements. Zeros are left out of the product on purpose: a shape [0, 2^62, 2^62] has no
// element, yet its strides overflow.
inline bool ShapeWithinLimit(const std::vector<int64_t>& shape) {
  int64_t nonzero = 1;
  for (int64_t d : shape) {
    if (d < 0) return false;
    if (d == 0) continue;
    if (nonzero > kMaxTensorElements / d) return false;
    nonzero *= d;
  }
  return true;
}

}  // namespace ortc::exec
