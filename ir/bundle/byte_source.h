// Where a weight's bytes come from: memory (packed or folded at compile time, or handed over by a
// backend through the plugin ABI) or a region of a file (external data, read in chunks so a large
// model is never held in memory whole).
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
  // `size` bytes at `data`, valid while `owner` lives (bytes a backend handed over).
  static ByteSource Owned(const void* data, size_t size, std::shared_ptr<const void> owner);

  int64_t size() const { return in_memory() ? static_cast<int64_t>(size_) : length_; }
  bool in_memory() const { return owner_ != nullptr; }
  // In memory: the bytes (valid while this source lives). A file region: where they are.
  const std::byte* data() const { return data_; }
  const std::filesystem::path& file() const { return file_; }
  int64_t file_offset() const { return offset_; }
  // Calls `sink` with consecutive chunks covering all bytes.
  Status ForEachChunk(const std::function<Status(std::span<const std::byte>)>& sink) const;
  // All bytes in memory (reads a file region whole: use only for tensors that need it).
  Result<std::shared_ptr<const std::string>> ReadAll() const;

 private:
  std::shared_ptr<const std::string> memory_;  // set by Memory()
  std::shared_ptr<const void> owner_;          // set by Memory() and Owned()
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
  std::filesystem::path file_;
  int64_t offset_ = 0;
  int64_t length_ = 0;
};

inline constexpr size_t kStreamChunkBytes = 4u << 20;

}  // namespace ortc::bundle
