// The process-wide pool of large host buffers, by exact (page-rounded) size: a model run again
// and again asks for the same sizes, so exact reuse is the common case and nothing is split.
#include "exec/buffer_pool.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <vector>

namespace ortc::exec {
namespace {

constexpr size_t kPage = 4096;

class Pool {
 public:
  void* Take(size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = idle_.find(bytes);
    if (it == idle_.end() || it->second.empty()) return nullptr;
    void* p = it->second.back();
    it->second.pop_back();
    idle_bytes_ -= bytes;
    return p;
  }
  void Give(void* p, size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (idle_bytes_ + bytes <= kPoolCapBytes) {
        idle_[bytes].push_back(p);
        idle_bytes_ += bytes;
        return;
      }
    }
    std::free(p);
  }
  size_t idle_bytes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return idle_bytes_;
  }

 private:
  std::mutex mutex_;
  std::map<size_t, std::vector<void*>> idle_;
  size_t idle_bytes_ = 0;
};

// Never destroyed: buffers may still be released by static destructors at exit.
Pool& ThePoolInstance() {
  static Pool* pool = new Pool;
  return *pool;
}

}  // namespace

std::shared_ptr<void> AcquireBuffer(size_t bytes, bool zero) {
  bytes = std::max<size_t>(bytes, 1);
  if (bytes < kPoolMinBytes) {
    const size_t rounded = (bytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded);
    if (!p) throw std::bad_alloc();
    if (zero) std::memset(p, 0, rounded);
    return std::shared_ptr<void>(p, std::free);
  }
  const size_t rounded = (bytes + kPage - 1) / kPage * kPage;
  Pool& pool = ThePoolInstance();
  void* p = pool.Take(rounded);
  if (!p) p = std::aligned_alloc(64, rounded);
  if (!p) throw std::bad_alloc();
  if (zero) std::memset(p, 0, rounded);
  return std::shared_ptr<void>(p, [rounded](void* q) { ThePoolInstance().Give(q, rounded); });
}

size_t PooledBytes() {
  return ThePoolInstance().idle_bytes();
}

void PrefaultBuffers(const std::vector<size_t>& sizes) {
  size_t total = 0;
  for (size_t b : sizes) total += b >= kPoolMinBytes ? b : 0;
  if (total == 0 || total > kPoolCapBytes / 2) return;
  std::vector<std::shared_ptr<void>> held;  // all at once: each size gets a buffer of its own
  try {
    for (size_t b : sizes)
      if (b >= kPoolMinBytes) held.push_back(AcquireBuffer(b, true));
  } catch (const std::bad_alloc&) {
    // Only a head start: a run that needs the memory reports its own failure.
  }
}

}  // namespace ortc::exec
