// Context binary layout: header | weights (page aligned) | programs | artefacts | manifest.
#include "bundle/context_binary_writer.h"

#include <xxhash.h>

#include <cstring>

#include "context_binary_format.h"
#include "context_binary_generated.h"

namespace ortc::bundle {

struct SectionRecord {
  fb::SectionKind kind;
  std::string name;
  uint64_t offset, size;
  uint32_t alignment;
  uint64_t checksum;
};

namespace {

uint64_t AlignUp(uint64_t v, uint64_t a) {
  return (v + a - 1) / a * a;
}

std::span<const std::byte> AsBytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

std::string Hex128(XXH128_hash_t h) {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return buf;
}

}  // namespace

Result<std::unique_ptr<ContextBinaryWriter>> ContextBinaryWriter::Create(
    const std::filesystem::path& final_path, BinaryInfo info) {
  auto w = std::unique_ptr<ContextBinaryWriter>(new ContextBinaryWriter());
  auto file = TempFile::Create(final_path);
  if (!file.ok()) return file.status();
  w->file_ = std::move(file).value();
  w->info_ = std::move(info);
  w->weights_begin_ = format::kWeightSectionAlignment;
  // Reserve the header and the padding up to the weights section.
  ORTC_RETURN_IF_ERROR(w->file_->Truncate(w->weights_begin_));
  return w;
}

Result<uint32_t> ContextBinaryWriter::AddWeight(const WeightSpec& weight) {
  const uint64_t size = static_cast<uint64_t>(weight.bytes.size());
  const uint64_t start = AlignUp(file_->size(), weight.alignment);
  if (start > file_->size()) ORTC_RETURN_IF_ERROR(file_->Truncate(start));
  // Write while hashing; a duplicate is rolled back below.
  XXH3_state_t* state = XXH3_createState();
  XXH3_128bits_reset(state);
  uint64_t at = start;
  Status s = weight.bytes.ForEachChunk([&](std::span<const std::byte> chunk) {
    XXH3_128bits_update(state, chunk.data(), chunk.size());
    Status w = file_->WriteAt(at, chunk);
    at += chunk.size();
    return w;
  });
  const XXH128_hash_t h = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  if (!s.ok()) return s;
  if (at - start != size)
    return IoError("weight source gave " + std::to_string(at - start) + " bytes, expected " +
                   std::to_string(size));

  stats_.weights_added++;
  stats_.weight_bytes_added += static_cast<int64_t>(size);
  auto range = by_hash_.equal_range({h.low64, h.high64});
  for (auto it = range.first; it != range.second; ++it) {
    const PoolEntry& e = pool_[it->second];
    if (e.size != size || e.dtype != weight.dtype || e.layout != weight.layout ||
        e.dims != weight.dims)
      continue;
    auto same = SameBytes(weights_begin_ + e.offset, start, size);
    if (!same.ok()) return same.status();
    if (*same) {
      ORTC_RETURN_IF_ERROR(file_->Truncate(start));
      return it->second;
    }
  }
  PoolEntry e{h.low64,      h.high64,    start - weights_begin_, size,
              weight.dtype, weight.dims, weight.layout,          weight.alignment};
  pool_.push_back(std::move(e));
  const auto index = static_cast<uint32_t>(pool_.size() - 1);
  by_hash_.insert({{h.low64, h.high64}, index});
  stats_.weights_stored++;
  stats_.weight_bytes_stored += static_cast<int64_t>(size);
  return index;
}

Result<bool> ContextBinaryWriter::SameBytes(uint64_t a, uint64_t b, uint64_t size) const {
  std::vector<std::byte> x(std::min<uint64_t>(size, kStreamChunkBytes)), y(x.size());
  for (uint64_t done = 0; done < size; done += x.size()) {
    const uint64_t n = std::min<uint64_t>(x.size(), size - done);
    ORTC_RETURN_IF_ERROR(file_->ReadAt(a + done, {x.data(), n}));
    ORTC_RETURN_IF_ERROR(file_->ReadAt(b + done, {y.data(), n}));
    if (std::memcmp(x.data(), y.data(), n) != 0) return false;
  }
  return true;
}

Result<uint64_t> ContextBinaryWriter::ChecksumRange(uint64_t offset, uint64_t size) const {
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  std::vector<std::byte> buf(std::min<uint64_t>(std::max<uint64_t>(size, 1), kStreamChunkBytes));
  for (uint64_t done = 0; done < size; done += buf.size()) {
    const uint64_t n = std::min<uint64_t>(buf.size(), size - done);
    Status s = file_->ReadAt(offset + done, {buf.data(), n});
    if (!s.ok()) {
      XXH3_freeState(state);
      return s;
    }
    XXH3_64bits_update(state, buf.data(), n);
  }
  const uint64_t h = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return h;
}

void ContextBinaryWriter::AddVersion(const std::string& key, const std::string& value) {
  for (const auto& [k, v] : info_.versions)
    if (k == key) return;
  info_.versions.emplace_back(key, value);
}

void ContextBinaryWriter::AddArtefact(std::string name, std::string bytes, uint32_t alignment) {
  artefacts_.push_back({std::move(name), std::move(bytes), alignment});
}

std::string ContextBinaryWriter::BuildManifest(const std::string& content_id,
                                               const std::vector<SectionRecord>& sections) const {
  flatbuffers::FlatBufferBuilder b(1 << 16);
  auto kvs = [&](const std::vector<std::pair<std::string, std::string>>& items) {
    std::vector<flatbuffers::Offset<fb::KeyValue>> v;
    for (const auto& [k, val] : items)
      v.push_back(fb::CreateKeyValueDirect(b, k.c_str(), val.c_str()));
    return b.CreateVector(v);
  };
  auto descs = [&](const std::vector<TensorDescSpec>& items) {
    std::vector<flatbuffers::Offset<fb::TensorDesc>> v;
    for (const auto& d : items) {
      auto symbols = b.CreateVectorOfStrings(d.symbols);
      v.push_back(fb::CreateTensorDesc(b, b.CreateString(d.name), d.dtype, b.CreateVector(d.dims),
                                       symbols));
    }
    return b.CreateVector(v);
  };
  std::vector<flatbuffers::Offset<fb::Section>> sec;
  for (const auto& s : sections) {
    sec.push_back(fb::CreateSection(b, s.kind, b.CreateString(s.name), s.offset, s.size,
                                    s.alignment, s.checksum));
  }
  std::vector<flatbuffers::Offset<fb::Graph>> graphs;
  uint64_t program_offset = 0;
  uint32_t program_section = 0;
  for (uint32_t i = 0; i < sections.size(); ++i) {
    if (sections[i].kind == fb::SectionKind::Programs) program_section = i;
  }
  for (const auto& g : graphs_) {
    program_offset = AlignUp(program_offset, 8);
    graphs.push_back(fb::CreateGraph(b, b.CreateString(g.name), descs(g.inputs), descs(g.outputs),
                                     program_section, program_offset, g.program.size(),
                                     b.CreateVector(g.weights), g.arena_bytes));
    program_offset += g.program.size();
  }
  std::vector<flatbuffers::Offset<fb::Weight>> weights;
  for (const auto& w : pool_) {
    weights.push_back(fb::CreateWeight(b, w.hash_lo, w.hash_hi, w.offset, w.size, w.dtype,
                                       b.CreateVector(w.dims), b.CreateString(w.layout),
                                       w.alignment));
  }
  auto manifest = fb::CreateManifest(
      b, b.CreateString(info_.producer), b.CreateString(info_.backend), kvs(info_.versions),
      b.CreateVectorOfStrings(info_.hardware_targets), b.CreateString(content_id),
      b.CreateVector(sec), b.CreateVector(graphs), b.CreateVector(weights), kvs(info_.properties));
  fb::FinishManifestBuffer(b, manifest);
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

Status ContextBinaryWriter::Finish() {
  std::vector<SectionRecord> sections;
  const uint64_t weights_end = std::max<uint64_t>(file_->size(), weights_begin_);
  ORTC_RETURN_IF_ERROR(file_->Truncate(weights_end));
  auto wsum = ChecksumRange(weights_begin_, weights_end - weights_begin_);
  if (!wsum.ok()) return wsum.status();
  sections.push_back({fb::SectionKind::Weights, "weights", weights_begin_,
                      weights_end - weights_begin_,
                      static_cast<uint32_t>(format::kWeightSectionAlignment), *wsum});

  // Programs: concatenated, each 8-aligned (FlatBuffers programs are read in place).
  std::string programs;
  for (const auto& g : graphs_) {
    programs.resize(AlignUp(programs.size(), 8), '\0');
    programs += g.program;
  }
  const uint64_t programs_at = AlignUp(weights_end, 64);
  ORTC_RETURN_IF_ERROR(file_->WriteAt(programs_at, AsBytes(programs)));
  sections.push_back({fb::SectionKind::Programs, "programs", programs_at, programs.size(), 64,
                      XXH3_64bits(programs.data(), programs.size())});
  uint64_t end = programs_at + programs.size();
  for (const auto& a : artefacts_) {
    const uint64_t at = AlignUp(end, a.alignment);
    ORTC_RETURN_IF_ERROR(file_->WriteAt(at, AsBytes(a.bytes)));
    sections.push_back({fb::SectionKind::Artefact, a.name, at, a.bytes.size(), a.alignment,
                        XXH3_64bits(a.bytes.data(), a.bytes.size())});
    end = at + a.bytes.size();
  }

  // The content id hashes the manifest as written without it: it changes with any content.
  const std::string draft = BuildManifest("", sections);
  stats_.content_id = Hex128(XXH3_128bits(draft.data(), draft.size()));
  const std::string manifest = BuildManifest(stats_.content_id, sections);
  const uint64_t manifest_at = AlignUp(end, format::kManifestAlignment);
  ORTC_RETURN_IF_ERROR(file_->WriteAt(manifest_at, AsBytes(manifest)));

  format::FixedHeader h{};
  std::memcpy(h.magic, format::kMagic, sizeof h.magic);
  h.format_major = format::kFormatMajor;
  h.format_minor = format::kFormatMinor;
  h.header_size = sizeof(format::FixedHeader);
  h.manifest_offset = manifest_at;
  h.manifest_size = manifest.size();
  h.file_size = manifest_at + manifest.size();
  h.manifest_checksum = XXH3_64bits(manifest.data(), manifest.size());
  ORTC_RETURN_IF_ERROR(file_->WriteAt(0, {reinterpret_cast<const std::byte*>(&h), sizeof h}));
  ORTC_RETURN_IF_ERROR(file_->Truncate(h.file_size));
  ORTC_RETURN_IF_ERROR(file_->Sync());
  stats_.file_bytes = static_cast<int64_t>(h.file_size);
  finished_ = true;
  return Status::Ok();
}

Result<std::string> ContextBinaryWriter::ReadFinished() const {
  std::string out(file_->size(), '\0');
  ORTC_RETURN_IF_ERROR(file_->ReadAt(0, {reinterpret_cast<std::byte*>(out.data()), out.size()}));
  return out;
}

}  // namespace ortc::bundle
