// SHA-256 (FIPS 180-4), for the digests bundle manifests and ctx model metadata record: source
// models, bundle files. Written here so the runtime needs no crypto library for `check`.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>

#include "ortc/status.h"

namespace ortc::format {

class Sha256 {
 public:
  Sha256();
  void Update(std::span<const std::byte> data);
  void Update(const std::string& text);
  // The digest as 64 lowercase hex digits; the object is then spent.
  std::string HexDigest();

 private:
  void Blocks(const uint8_t* p, size_t count);  // whole 64-byte blocks
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

// The digest of a file's bytes, read in chunks. on_bytes, when given, hears after each chunk
// how many bytes are hashed and how many the file has (a large model takes seconds).
Result<std::string> Sha256OfFile(
    const std::filesystem::path& path,
    const std::function<void(int64_t done, int64_t total)>& on_bytes = {});

}  // namespace ortc::format
