// Large host buffers (tensors allocated at run time, each run's arena) recycled across runs.
// Without it every run maps fresh pages for its large buffers and unmaps them after: glibc
// serves big allocations with mmap, so the kernel zero-fills and faults in each page again on
// every run. Measured on PP-OCRv4 rec (dynamic shapes, 1 thread, 30 runs): p50 106 ms with
// per-run mapping, 62 ms with the pool, and a p90 that no longer doubles.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace ortc::exec {

// A 64-byte aligned buffer of at least `bytes`; zero-filled when `zero`. Buffers of 64 KiB and
// more come from the pool and go back to it when the last owner lets go; the pool keeps at most
// kPoolCapBytes of idle buffers (the rest is freed). Thread-safe.
std::shared_ptr<void> AcquireBuffer(size_t bytes, bool zero);

inline constexpr size_t kPoolMinBytes = size_t{4} << 10;
inline constexpr size_t kPoolCapBytes = size_t{512} << 20;

// Idle bytes the pool holds now (for tests and reports).
size_t PooledBytes();

// Puts into the pool one buffer of each size, its pages written once (mapped and zero-filled),
// so that the run that asks for these sizes first takes pages already in memory: a session's
// first run then costs what later runs cost instead of faulting in its arena and its large
// outputs (an LM's 26 MB of logits: about 6,400 page faults). Sizes below kPoolMinBytes are
// skipped; nothing is done when the sizes together would not stay under kPoolCapBytes / 2.
void PrefaultBuffers(const std::vector<size_t>& sizes);

}  // namespace ortc::exec
