// Static memory plan: places buffers with known sizes and lifetimes at offsets in one arena,
// reusing memory between buffers whose lifetimes do not overlap.
#pragma once

#include <cstdint>
#include <vector>

namespace ortc::lowering {

struct BufferRequest {
  int64_t size = 0;
  int first_use = 0;  // index of the op that writes it
  int last_use = 0;   // index of the last op that reads it (inclusive)
};

struct MemoryPlan {
  std::vector<int64_t> offsets;  // per request
  int64_t arena_bytes = 0;
};

// Greedy by decreasing size, each buffer at the lowest aligned offset free during its lifetime.
MemoryPlan PlanMemory(const std::vector<BufferRequest>& requests, int64_t alignment = 64);

}  // namespace ortc::lowering
