// Intra-op thread counts: the default (physical cores) and the clamp to the machine's CPUs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <thread>

#include "cpu_kernel/intra_op_threads.h"

using namespace ortc::exec;

TEST_CASE("intra-op threads default to the physical cores and never exceed the CPUs", "[threads]") {
  const int logical = static_cast<int>(std::thread::hardware_concurrency());
  const int physical = PhysicalCoreCount();
  CHECK(physical >= 1);
  if (logical > 0) CHECK(physical <= logical);
  CHECK(ResolveIntraOpThreads(0) == physical);
  CHECK(ResolveIntraOpThreads(-5) == physical);
  CHECK(ResolveIntraOpThreads(1) == 1);
  CHECK(ResolveIntraOpThreads(1000000) == std::max(1, logical));
}

TEST_CASE("an op forks only the threads its work pays for", "[threads]") {
  UseIntraOpThreads(4);
  const double per_thread = 1 << 20;  // the rule's multiply-adds per thread
  CHECK(ThreadsForWork(0) == 1);
  CHECK(ThreadsForWork(per_thread - 1) == 1);
  CHECK(ThreadsForWork(2 * per_thread) == 2);
  CHECK(ThreadsForWork(3.5 * per_thread) == 3);
  CHECK(ThreadsForWork(1e12) == 4);  // never more than the session's threads
  UseIntraOpThreads(1);
  CHECK(ThreadsForWork(1e12) == 1);
}

TEST_CASE("a scoped thread count lowers, never raises, and restores", "[threads]") {
  UseIntraOpThreads(3);
  {
    const ScopedIntraOpThreads one(1);
    CHECK(CurrentIntraOpThreads() == 1);
    {
      const ScopedIntraOpThreads more(8);  // within a scope of 1, 8 stays 1
      CHECK(CurrentIntraOpThreads() == 1);
    }
    CHECK(CurrentIntraOpThreads() == 1);
  }
  CHECK(CurrentIntraOpThreads() == 3);
  {
    const ScopedIntraOpThreads none(0);  // not a count: no change
    CHECK(CurrentIntraOpThreads() == 3);
  }
  UseIntraOpThreads(1);
}
