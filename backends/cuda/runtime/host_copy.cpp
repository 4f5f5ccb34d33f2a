// Host copies split over threads (host_copy.h).
#include "host_copy.h"

#include <algorithm>
#include <cstring>
#include <map>

namespace ortc::cuda_rt {

HostCopyPool::HostCopyPool(unsigned threads) : threads_(std::max(1u, threads)) {
  for (unsigned i = 1; i < threads_; ++i) workers_.emplace_back([this] { Work(); });
}

HostCopyPool::~HostCopyPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  start_.notify_all();
  for (auto& w : workers_) w.join();
}

unsigned HostCopyPool::TakeParts() {
  unsigned copied = 0;
  for (;;) {
    size_t begin, end;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (next_part_ >= parts_) break;
      const unsigned part = next_part_++;
      begin = std::min(bytes_, part * part_bytes_);
      end = std::min(bytes_, begin + part_bytes_);
    }
    std::memcpy(dst_ + begin, src_ + begin, end - begin);
    ++copied;
  }
  return copied;
}

void HostCopyPool::Work() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      start_.wait(lock, [&] { return stop_ || job_ != seen; });
      if (stop_) return;
      seen = job_;
    }
    const unsigned copied = TakeParts();
    if (copied == 0) continue;
    std::lock_guard<std::mutex> lock(mu_);
    parts_done_ += copied;
    if (parts_done_ == parts_) done_.notify_one();
  }
}

void HostCopyPool::Copy(void* dst, const void* src, size_t bytes) {
  if (threads_ == 1 || bytes < kSplitBytes) {
    if (bytes) std::memcpy(dst, src, bytes);
    return;
  }
  std::lock_guard<std::mutex> turn(turn_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    dst_ = static_cast<uint8_t*>(dst);
    src_ = static_cast<const uint8_t*>(src);
    bytes_ = bytes;
    parts_ = threads_;
    // Parts on 4 KiB boundaries, so no two threads write one page.
    part_bytes_ = ((bytes + parts_ - 1) / parts_ + 4095) / 4096 * 4096;
    next_part_ = 0;
    parts_done_ = 0;
    ++job_;
  }
  start_.notify_all();
  const unsigned copied = TakeParts();
  std::unique_lock<std::mutex> lock(mu_);
  parts_done_ += copied;
  done_.wait(lock, [&] { return parts_done_ == parts_; });
}

unsigned DefaultHostCopyThreads() {
  const unsigned cores = std::thread::hardware_concurrency();
  return std::clamp(cores / 2, 1u, 8u);
}

std::shared_ptr<HostCopyPool> SharedHostCopyPool(unsigned threads) {
  static std::mutex mu;
  static auto* pools = new std::map<unsigned, std::weak_ptr<HostCopyPool>>();
  std::lock_guard<std::mutex> lock(mu);
  std::weak_ptr<HostCopyPool>& slot = (*pools)[threads];
  if (auto pool = slot.lock()) return pool;
  auto pool = std::make_shared<HostCopyPool>(threads);
  slot = pool;
  return pool;
}

}  // namespace ortc::cuda_rt
