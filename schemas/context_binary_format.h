// ortc context binary: the fixed header and layout constants. Together with
// context_binary.fbs this is the single definition of the format (see schemas/README.md).
#pragma once

#include <cstdint>

namespace ortc::format {

inline constexpr char kMagic[8] = {'O', 'R', 'T', 'C', 'B', 'I', 'N', '\0'};
inline constexpr uint16_t kFormatMajor = 1;
inline constexpr uint16_t kFormatMinor = 0;

// The first 64 bytes of every context binary. The first five fields keep their meaning in
// every format version; later fields belong to major version 1. Little-endian.
struct FixedHeader {
  char magic[8];
  uint16_t format_major;
  uint16_t format_minor;
  uint32_t header_size;      // bytes of the header in this file (64 in format 1)
  uint64_t flags;            // reserved, 0
  uint64_t manifest_offset;  // where the FlatBuffers manifest starts
  uint64_t manifest_size;
  uint64_t file_size;          // the whole file, to detect truncation
  uint64_t manifest_checksum;  // XXH3-64 of the manifest bytes
  uint64_t reserved;
};
static_assert(sizeof(FixedHeader) == 64, "the fixed header is 64 bytes");

// Alignment rules (bytes).
inline constexpr uint64_t kWeightSectionAlignment = 4096;  // page: the section can be mmapped
inline constexpr uint32_t kCpuWeightAlignment = 64;        // SIMD loads
inline constexpr uint32_t kGpuWeightAlignment = 256;       // device copies
inline constexpr uint64_t kManifestAlignment = 8;

// Hard caps a reader applies before trusting any length (a corrupt file must not make it
// allocate or loop without bound).
inline constexpr uint64_t kMaxManifestBytes = 256ull << 20;

}  // namespace ortc::format
