// Greedy offset assignment (largest buffers first), deterministic for the same requests.
#include "lowering/memory_plan.h"

#include <algorithm>
#include <numeric>

namespace ortc::lowering {

MemoryPlan PlanMemory(const std::vector<BufferRequest>& requests, int64_t alignment) {
  MemoryPlan plan;
  plan.offsets.assign(requests.size(), 0);
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return requests[a].size > requests[b].size; });
  std::vector<size_t> placed;
  for (size_t r : order) {
    const auto& req = requests[r];
    // Blocks already placed that are alive at the same time, by offset.
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (size_t p : placed) {
      const auto& other = requests[p];
      if (other.first_use <= req.last_use && req.first_use <= other.last_use) {
        busy.push_back({plan.offsets[p], plan.offsets[p] + other.size});
      }
    }
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (const auto& [begin, end] : busy) {
      if (offset + req.size <= begin) break;
      offset = std::max(offset, (end + alignment - 1) / alignment * alignment);
    }
    plan.offsets[r] = offset;
    plan.arena_bytes = std::max(plan.arena_bytes, offset + req.size);
    placed.push_back(r);
  }
  plan.arena_bytes = (plan.arena_bytes + alignment - 1) / alignment * alignment;
  return plan;
}

}  // namespace ortc::lowering
