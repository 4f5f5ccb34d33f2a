// Counts heap allocations made by the calling thread between Start and Stop, through a
// replacement of the global operator new in the test executable (which also serves the shared
// libraries it loads, the CUDA plugin among them).
#pragma once

#include <cstddef>

namespace ortc::test {

void StartCountingAllocations();
size_t StopCountingAllocations();  // allocations since Start on this thread

}  // namespace ortc::test
