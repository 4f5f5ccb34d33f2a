// A read-only memory mapping of a whole file. Move-only; unmaps on destruction.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>

#include "ortc/status.h"

namespace ortc::format {

class MappedFile {
 public:
  static Result<std::shared_ptr<MappedFile>> Open(const std::filesystem::path& path);
  // Wraps bytes already in memory (an embedded payload); no file behind them.
  static std::shared_ptr<MappedFile> FromBytes(std::string bytes);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::byte> bytes() const { return {data_, size_}; }
  const std::filesystem::path& path() const { return path_; }

 private:
  MappedFile() = default;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
  std::string owned_;
  std::filesystem::path path_;
};

}  // namespace ortc::format
