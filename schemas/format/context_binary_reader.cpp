// Context binary verification: every offset and size is checked before it is used.
#include "format/context_binary_reader.h"

#include <xxhash.h>

#include <cstring>

namespace ortc::format {

// Fuzzing builds (scripts/fuzz) accept wrong checksums, so mutations reach the checks behind
// them: what a buggy producer or an attacker who recomputes checksums would hand the reader.
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
constexpr bool kSkipChecksums = true;
#else
constexpr bool kSkipChecksums = false;
#endif
namespace {

std::string Version(uint16_t major, uint16_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

bool InBounds(uint64_t offset, uint64_t size, uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

}  // namespace

std::string_view HeaderStateName(HeaderState s) {
  switch (s) {
    case HeaderState::kNotOrtc:
      return "not an ortc binary";
    case HeaderState::kTruncated:
      return "truncated";
    case HeaderState::kIncompatible:
      return "incompatible version";
    case HeaderState::kCompatible:
      return "compatible";
  }
  return "?";
}

HeaderCheck CheckHeader(std::span<const std::byte> bytes) {
  HeaderCheck r;
  const size_t n = bytes.size();
  const size_t magic_seen = std::min(n, sizeof(kMagic));
  if (std::memcmp(bytes.data(), kMagic, magic_seen) != 0) {
    r.message = "not an ortc context binary (wrong magic bytes)";
    return r;
  }
  if (n < sizeof(kMagic) + 4) {
    r.state = n == 0 ? HeaderState::kNotOrtc : HeaderState::kTruncated;
    r.message = n == 0 ? "the file is empty" : "truncated: only " + std::to_string(n) + " bytes";
    return r;
  }
  uint16_t major = 0, minor = 0;
  std::memcpy(&major, bytes.data() + 8, 2);
  std::memcpy(&minor, bytes.data() + 10, 2);
  r.header.format_major = major;
  r.header.format_minor = minor;
  if (major != kFormatMajor) {
    r.state = HeaderState::kIncompatible;
    r.message = "format version " + Version(major, minor) +
                " cannot be read by this reader (format " + Version(kFormatMajor, kFormatMinor) +
                "): " +
                (major > kFormatMajor ? "use a newer ortc runtime, or recompile with this ortc"
                                      : "recompile the model with this ortc");
    return r;
  }
  if (n < sizeof(FixedHeader)) {
    r.state = HeaderState::kTruncated;
    r.message = "truncated: " + std::to_string(n) + " bytes, shorter than the 64-byte header";
    return r;
  }
  std::memcpy(&r.header, bytes.data(), sizeof(FixedHeader));
  if (r.header.header_size < sizeof(FixedHeader) || r.header.header_size > n) {
    r.state = HeaderState::kTruncated;
    r.message = "header size " + std::to_string(r.header.header_size) + " is invalid for a " +
                std::to_string(n) + "-byte file";
    return r;
  }
  if (r.header.file_size > n) {
    r.state = HeaderState::kTruncated;
    r.message = "truncated: the header records " + std::to_string(r.header.file_size) +
                " bytes but the file has " + std::to_string(n);
    return r;
  }
  if (r.header.file_size < n) {
    r.state = HeaderState::kNotOrtc;
    r.message = "the file has " + std::to_string(n - r.header.file_size) +
                " bytes after the recorded end (" + std::to_string(r.header.file_size) + ")";
    return r;
  }
  r.state = HeaderState::kCompatible;
  if (minor > kFormatMinor) {
    r.message = "format " + Version(major, minor) + " is newer than this reader's " +
                Version(kFormatMajor, kFormatMinor) + "; sections it does not know are ignored";
  }
  return r;
}

Result<std::shared_ptr<const ContextBinary>> ContextBinary::OpenFile(
    const std::filesystem::path& path) {
  auto file = MappedFile::Open(path);
  if (!file.ok()) return file.status();
  auto bin = Open(std::move(file).value());
  if (!bin.ok()) return bin.status().WithContext(path.string());
  return bin;
}

Result<std::shared_ptr<const ContextBinary>> ContextBinary::Open(std::shared_ptr<MappedFile> file) {
  auto bin = std::shared_ptr<ContextBinary>(new ContextBinary());
  bin->file_ = std::move(file);
  ORTC_RETURN_IF_ERROR(bin->Verify());
  return std::shared_ptr<const ContextBinary>(std::move(bin));
}

Status ContextBinary::Verify() {
  const auto bytes = file_->bytes();
  HeaderCheck hc = CheckHeader(bytes);
  if (hc.state != HeaderState::kCompatible) {
    return InvalidGraph("context binary " + std::string(HeaderStateName(hc.state)) + ": " +
                        hc.message);
  }
  header_ = hc.header;
  const uint64_t size = bytes.size();
  if (!InBounds(header_.manifest_offset, header_.manifest_size, size) ||
      header_.manifest_offset < header_.header_size || header_.manifest_size > kMaxManifestBytes ||
      header_.manifest_offset % kManifestAlignment != 0) {
    return InvalidGraph("manifest: offset " + std::to_string(header_.manifest_offset) +
                        " and size " + std::to_string(header_.manifest_size) + " do not fit the " +
                        std::to_string(size) + "-byte file");
  }
  const auto* manifest_bytes =
      reinterpret_cast<const uint8_t*>(bytes.data() + header_.manifest_offset);
  if (XXH3_64bits(manifest_bytes, header_.manifest_size) != header_.manifest_checksum &&
      !kSkipChecksums) {
    return InvalidGraph("manifest: checksum mismatch (the file is corrupt)");
  }
  flatbuffers::Verifier verifier(manifest_bytes, header_.manifest_size);
  if (!fb::VerifyManifestBuffer(verifier)) {
    return InvalidGraph("manifest: not a valid manifest structure");
  }
  manifest_ = fb::GetManifest(manifest_bytes);
  if (!manifest_->sections() || !manifest_->graphs() || !manifest_->weights() ||
      !manifest_->backend()) {
    return InvalidGraph("manifest: required tables are missing");
  }
  if (const auto* versions = manifest_->backend_versions()) {
    for (uint32_t i = 0; i < versions->size(); ++i) {
      if (!versions->Get(i)->key() || !versions->Get(i)->value())
        return InvalidGraph("manifest: backend_versions entry " + std::to_string(i) +
                            " has no key or no value");
    }
  }

  const auto& sections = *manifest_->sections();
  for (uint32_t i = 0; i < sections.size(); ++i) {
    const auto* s = sections.Get(i);
    const std::string what = "section " + std::to_string(i) + " (" +
                             (s->name() ? s->name()->str() : std::string("unnamed")) + ")";
    if (!InBounds(s->offset(), s->size(), header_.manifest_offset) ||
        s->offset() < header_.header_size) {
      return InvalidGraph(what + ": range " + std::to_string(s->offset()) + "+" +
                          std::to_string(s->size()) + " lies outside the data area");
    }
    if (s->alignment() == 0 || s->offset() % s->alignment() != 0) {
      return InvalidGraph(what + ": offset " + std::to_string(s->offset()) + " is not aligned to " +
                          std::to_string(s->alignment()));
    }
    if (XXH3_64bits(bytes.data() + s->offset(), s->size()) != s->checksum() && !kSkipChecksums) {
      return InvalidGraph(what + ": checksum mismatch (the file is corrupt)");
    }
    if (s->kind() == fb::SectionKind::Weights) {
      if (weights_section_ >= 0) return InvalidGraph(what + ": a second weights section");
      weights_section_ = static_cast<int>(i);
    }
  }

  // FlatBuffers' verifier checks vectors for 4-byte alignment only: 8-byte dims could pass it
  // misaligned, and reading them is undefined behaviour. (Empty vectors are read from nowhere;
  // FlatBuffers itself may leave them at 4 mod 8.)
  auto aligned = [](const flatbuffers::Vector<int64_t>* v) {
    return !v || v->size() == 0 || reinterpret_cast<uintptr_t>(v->data()) % alignof(int64_t) == 0;
  };
  const auto& weights = *manifest_->weights();
  for (uint32_t i = 0; i < weights.size(); ++i) {
    const auto* w = weights.Get(i);
    if (!aligned(w->dims()))
      return InvalidGraph("weight " + std::to_string(i) + ": dims are not aligned to 8 bytes");
    if (weights_section_ < 0)
      return InvalidGraph("weights: the binary has weights but no weights section");
    const auto* ws = sections.Get(static_cast<uint32_t>(weights_section_));
    if (!InBounds(w->offset(), w->size(), ws->size())) {
      return InvalidGraph("weight " + std::to_string(i) + ": range " + std::to_string(w->offset()) +
                          "+" + std::to_string(w->size()) + " lies outside the weights section");
    }
    if (w->alignment() == 0 || (ws->offset() + w->offset()) % w->alignment() != 0) {
      return InvalidGraph("weight " + std::to_string(i) + ": not aligned to " +
                          std::to_string(w->alignment()));
    }
    // The section checksum catches accidents; the manifest's 128-bit hash of each weight also
    // catches weight bytes changed by a producer that recomputed the section checksum.
    const XXH128_hash_t h = XXH3_128bits(bytes.data() + ws->offset() + w->offset(), w->size());
    if ((h.low64 != w->hash_lo() || h.high64 != w->hash_hi()) && !kSkipChecksums) {
      return InvalidGraph("weight " + std::to_string(i) + " (" + std::to_string(w->size()) +
                          " bytes at " + std::to_string(w->offset()) +
                          " in the weights section): its bytes do not match the manifest's "
                          "hash (the file was altered after it was compiled)");
    }
  }

  for (const auto* g : *manifest_->graphs()) {
    const std::string what = "graph '" + (g->name() ? g->name()->str() : std::string()) + "'";
    if (!g->name() || g->name()->size() == 0) return InvalidGraph("a graph has no name");
    for (const auto* descs : {g->inputs(), g->outputs()}) {
      if (!descs) continue;
      for (const auto* d : *descs) {
        if (!aligned(d->dims()))
          return InvalidGraph(what + ": an input or output's dims are not aligned to 8 bytes");
      }
    }
    if (g->program_section() >= sections.size()) {
      return InvalidGraph(what + ": program section " + std::to_string(g->program_section()) +
                          " does not exist");
    }
    const auto* ps = sections.Get(g->program_section());
    if (!InBounds(g->program_offset(), g->program_size(), ps->size())) {
      return InvalidGraph(what + ": program range lies outside its section");
    }
    // Programs are FlatBuffers whose 8-byte fields are aligned relative to the program's start;
    // the writer puts every program at a multiple of 8 in the file, and readers rely on it.
    if ((ps->offset() + g->program_offset()) % 8 != 0) {
      return InvalidGraph(what + ": program offset " + std::to_string(g->program_offset()) +
                          " is not aligned to 8 bytes");
    }
    if (g->weights()) {
      for (uint32_t w : *g->weights()) {
        if (w >= weights.size()) {
          return InvalidGraph(what + ": refers to weight " + std::to_string(w) + " of " +
                              std::to_string(weights.size()));
        }
      }
    }
  }
  return Status::Ok();
}

std::span<const std::byte> ContextBinary::SectionBytes(uint32_t section) const {
  const auto* s = manifest_->sections()->Get(section);
  return file_->bytes().subspan(s->offset(), s->size());
}

std::span<const std::byte> ContextBinary::WeightBytes(uint32_t weight) const {
  const auto* w = manifest_->weights()->Get(weight);
  return SectionBytes(static_cast<uint32_t>(weights_section_)).subspan(w->offset(), w->size());
}

const fb::Graph* ContextBinary::FindGraph(std::string_view name) const {
  for (const auto* g : *manifest_->graphs()) {
    if (g->name()->string_view() == name) return g;
  }
  return nullptr;
}

std::span<const std::byte> ContextBinary::ProgramBytes(const fb::Graph& graph) const {
  return SectionBytes(graph.program_section())
      .subspan(graph.program_offset(), graph.program_size());
}

std::string_view ContextBinary::content_id() const {
  return manifest_->content_id() ? manifest_->content_id()->string_view() : std::string_view();
}

}  // namespace ortc::format
