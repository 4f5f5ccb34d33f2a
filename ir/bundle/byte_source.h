// Where a weight's bytes come from: memory (packed or folded at compile time) or a region of a
// file (external data, read in chunks so a large model is never held in memory whole).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "ortc/status.h"

namespace ortc::bundle {

class ByteSource {
 public:
  static ByteSource Memory(std::shared_ptr<const std::string> bytes);
  static ByteSource FileRegion(std::filesystem::path file, int64_t offset, int64_t length);

  int64_t size() const { return memory_ ? static_cast<int64_t>(memory_->size()) : length_; }
  // Calls `sink` with consecutive chunks covering all bytes.
  Status ForEachChunk(const std::function<Status(std::span<const std::byte>)>& sink) const;
  // All bytes in memory (reads a file region whole: use only for tensors that need it).
  Result<std::shared_ptr<const std::string>> ReadAll() const;

 private:
  std::shared_ptr<const std::string> memory_;
  std::filesystem::path file_;
  int64_t offset_ = 0;
  int64_t length_ = 0;
};

inline constexpr size_t kStreamChunkBytes = 4u << 20;

}  // namespace ortc::bundle
