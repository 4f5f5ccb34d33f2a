// Static memory plan: buffers alive at the same time never overlap; memory is reused.
#include <catch2/catch.hpp>

#include <random>

#include "lowering/memory_plan.h"

using ortc::lowering::BufferRequest;
using ortc::lowering::PlanMemory;

TEST_CASE("buffers alive together never overlap, on random lifetimes", "[memory_plan][property]") {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<BufferRequest> reqs;
    const int n = 1 + static_cast<int>(rng() % 40);
    int64_t total = 0;
    for (int i = 0; i < n; ++i) {
      const int first = static_cast<int>(rng() % 50);
      reqs.push_back(
          {static_cast<int64_t>(rng() % 5000), first, first + static_cast<int>(rng() % 10)});
      total += (reqs.back().size + 63) / 64 * 64;
    }
    auto plan = PlanMemory(reqs, 64);
    REQUIRE(plan.offsets.size() == reqs.size());
    CHECK(plan.arena_bytes <= total);
    for (int a = 0; a < n; ++a) {
      CHECK(plan.offsets[a] % 64 == 0);
      CHECK(plan.offsets[a] + reqs[a].size <= plan.arena_bytes);
      for (int b = a + 1; b < n; ++b) {
        const bool live_together =
            reqs[a].first_use <= reqs[b].last_use && reqs[b].first_use <= reqs[a].last_use;
        const bool overlap = plan.offsets[a] < plan.offsets[b] + reqs[b].size &&
                             plan.offsets[b] < plan.offsets[a] + reqs[a].size;
        if (live_together && reqs[a].size > 0 && reqs[b].size > 0) REQUIRE_FALSE(overlap);
      }
    }
  }
}

TEST_CASE("a chain reuses memory", "[memory_plan]") {
  // a (op0->op1), b (op1->op2), c (op2->op3): a and c never live together, so they share.
  auto plan = PlanMemory({{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}}, 64);
  CHECK(plan.offsets[0] == plan.offsets[2]);
  CHECK(plan.arena_bytes == 2048);
}
