// Reads and verifies an ortc context binary. Verification happens once, at Open: header,
// manifest (FlatBuffers verifier), every section's bounds, alignment and checksum, every
// graph's program range and weight references, every weight's range. Afterwards the data is
// trusted and accessors do no checks.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "base/mapped_file.h"
#include "context_binary_format.h"
#include "context_binary_generated.h"
#include "ortc/status.h"

namespace ortc::format {

enum class HeaderState { kNotOrtc, kTruncated, kIncompatible, kCompatible };

struct HeaderCheck {
  HeaderState state = HeaderState::kNotOrtc;
  std::string message;  // why, for every state but kCompatible (which may note a newer minor)
  FixedHeader header{};
};

// Sorts a file by its first bytes and its real size.
HeaderCheck CheckHeader(std::span<const std::byte> file_bytes);
std::string_view HeaderStateName(HeaderState s);

class ContextBinary {
 public:
  // Verifies `file` completely; errors are INVALID_GRAPH and name the failing section/check.
  static Result<std::shared_ptr<const ContextBinary>> Open(std::shared_ptr<MappedFile> file);
  static Result<std::shared_ptr<const ContextBinary>> OpenFile(const std::filesystem::path& path);

  const FixedHeader& header() const { return header_; }
  const fb::Manifest& manifest() const { return *manifest_; }
  std::span<const std::byte> file_bytes() const { return file_->bytes(); }
  std::span<const std::byte> SectionBytes(uint32_t section) const;
  std::span<const std::byte> WeightBytes(uint32_t weight) const;
  // nullptr when the binary has no graph of that name.
  const fb::Graph* FindGraph(std::string_view name) const;
  std::span<const std::byte> ProgramBytes(const fb::Graph& graph) const;
  std::string_view content_id() const;

 private:
  ContextBinary() = default;
  Status Verify();

  std::shared_ptr<MappedFile> file_;
  FixedHeader header_{};
  const fb::Manifest* manifest_ = nullptr;
  int weights_section_ = -1;
};

}  // namespace ortc::format
