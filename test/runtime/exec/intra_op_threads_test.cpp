// Intra-op thread counts: the default (physical cores) and the clamp to the machine's CPUs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <thread>

#include "exec/intra_op_threads.h"

using namespace ortc::exec;

TEST_CASE("intra-op threads default to the physical cores and never exceed the CPUs",
          "[threads]") {
  const int logical = static_cast<int>(std::thread::hardware_concurrency());
  const int physical = PhysicalCoreCount();
  CHECK(physical >= 1);
  if (logical > 0) CHECK(physical <= logical);
  CHECK(ResolveIntraOpThreads(0) == physical);
  CHECK(ResolveIntraOpThreads(-5) == physical);
  CHECK(ResolveIntraOpThreads(1) == 1);
  CHECK(ResolveIntraOpThreads(1000000) == std::max(1, logical));
}
