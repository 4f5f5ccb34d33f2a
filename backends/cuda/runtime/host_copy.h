// Host-side copies of a run's large tensors between the caller's memory and the pinned staging
// buffer, split over a few threads: one thread copies about 10 GB/s, well below what the bus
// moves (an LM's logits, [1, 128, 50257] fp32 = 26 MB, would take longer to leave the staging
// buffer than to cross the bus). The workers are started once and shared by every session of
// the process that asks for the same number; a copy allocates nothing.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace ortc::cuda_rt {

class HostCopyPool {
 public:
  // `threads` copying threads in all, the caller's included (1: plain memcpy, no worker).
  explicit HostCopyPool(unsigned threads);
  ~HostCopyPool();
  HostCopyPool(const HostCopyPool&) = delete;
  HostCopyPool& operator=(const HostCopyPool&) = delete;

  // Copies `bytes` from `src` to `dst` (not overlapping); copies of at least kSplitBytes are
  // cut into one part per thread. Copies from several callers take turns.
  void Copy(void* dst, const void* src, size_t bytes);
  unsigned threads() const { return threads_; }

  // Below this, waking the workers costs more than it saves.
  static constexpr size_t kSplitBytes = size_t{2} << 20;

 private:
  void Work();
  // Copies parts of the current job until none is left; returns how many it copied.
  unsigned TakeParts();

  const unsigned threads_;
  std::mutex turn_;  // one job at a time
  std::mutex mu_;
  std::condition_variable start_, done_;
  uint8_t* dst_ = nullptr;
  const uint8_t* src_ = nullptr;
  size_t bytes_ = 0, part_bytes_ = 0;
  unsigned parts_ = 0, next_part_ = 0, parts_done_ = 0;
  uint64_t job_ = 0;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

// The default number of copying threads: half the machine's cores, at most 8, at least 1.
unsigned DefaultHostCopyThreads();

// The process's pool of `threads` threads, started on first use and kept while a session holds it.
std::shared_ptr<HostCopyPool> SharedHostCopyPool(unsigned threads);

}  // namespace ortc::cuda_rt
