// Weak-pointer cache keyed by the binary's canonical path.
#include "loader/binary_cache.h"

#include <atomic>
#include <map>
#include <mutex>

namespace ortc::loader {
namespace {

std::mutex g_mutex;
std::map<std::string, std::weak_ptr<const format::ContextBinary>> g_cache;
std::atomic<int> g_opens{0};

}  // namespace

Result<std::shared_ptr<const format::ContextBinary>> OpenSharedBinary(
    const std::filesystem::path& path) {
  std::error_code ec;
  const std::string key = std::filesystem::weakly_canonical(path, ec).string();
  std::lock_guard<std::mutex> lock(g_mutex);
  if (auto it = g_cache.find(key); it != g_cache.end()) {
    if (auto bin = it->second.lock()) return bin;
  }
  auto bin = format::ContextBinary::OpenFile(path);
  if (!bin.ok()) return bin.status();
  ++g_opens;
  g_cache[key] = *bin;
  return bin;
}

int BinaryOpenCount() {
  return g_opens.load();
}

}  // namespace ortc::loader
