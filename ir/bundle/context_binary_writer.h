// Writes one context binary (schemas/README.md): weights are streamed into a deduplicating
// pool as they are added (XXH3-128 content hash, confirmed by a byte compare), programs and
// artefacts are gathered, and Finish() lays out sections, manifest and header. The file is a
// TempFile until Commit(), so a failed compile leaves nothing that looks valid.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bundle/byte_source.h"
#include "bundle/temp_file.h"
#include "ortc/status.h"

namespace ortc::bundle {

struct TensorDescSpec {
  std::string name;
  int32_t dtype = 0;
  std::vector<int64_t> dims;         // -1 for run-time sizes
  std::vector<std::string> symbols;  // per dim, "" when none; may be empty
};

struct WeightSpec {
  int32_t dtype = 0;
  std::vector<int64_t> dims;
  std::string layout = "plain";
  uint32_t alignment = 64;
  ByteSource bytes;
};

struct GraphSpec {
  std::string name;
  std::vector<TensorDescSpec> inputs, outputs;
  std::string program;            // backend-specific program bytes
  std::vector<uint32_t> weights;  // program weight slot -> pool index
  uint64_t arena_bytes = 0;
};

struct BinaryInfo {
  std::string producer;
  std::string backend;
  std::vector<std::pair<std::string, std::string>> versions;
  std::vector<std::string> hardware_targets;
  std::vector<std::pair<std::string, std::string>> properties;
};

struct WriteStats {
  int64_t weights_added = 0;        // AddWeight calls
  int64_t weights_stored = 0;       // distinct entries in the pool
  int64_t weight_bytes_added = 0;   // bytes over all AddWeight calls
  int64_t weight_bytes_stored = 0;  // bytes actually written (without padding)
  int64_t file_bytes = 0;
  std::string content_id;
};

class ContextBinaryWriter {
 public:
  static Result<std::unique_ptr<ContextBinaryWriter>> Create(
      const std::filesystem::path& final_path, BinaryInfo info);
  // Streams the weight into the pool; returns its pool index (an existing one for a duplicate).
  Result<uint32_t> AddWeight(const WeightSpec& weight);
  void AddGraph(GraphSpec graph) { graphs_.push_back(std::move(graph)); }
  void AddArtefact(std::string name, std::string bytes, uint32_t alignment);
  // Adds a manifest version entry unless the key is already there (graphs of one binary agree).
  void AddVersion(const std::string& key, const std::string& value);
  // Lays out the file and fsyncs it; the final name is untouched until Commit().
  Status Finish();
  Status Commit() { return file_->Commit(); }
  TempFile& file() { return *file_; }
  // The finished bytes (for embedding in the model instead of committing the file).
  Result<std::string> ReadFinished() const;

  const WriteStats& stats() const { return stats_; }
  // What the manifest records: versions added by AddVersion included.
  const BinaryInfo& info() const { return info_; }
  const std::filesystem::path& final_path() const { return file_->final_path(); }

 private:
  struct PoolEntry {
    uint64_t hash_lo, hash_hi, offset, size;
    int32_t dtype;
    std::vector<int64_t> dims;
    std::string layout;
    uint32_t alignment;
  };
  struct Artefact {
    std::string name, bytes;
    uint32_t alignment;
  };
  Result<bool> SameBytes(uint64_t a, uint64_t b, uint64_t size) const;
  Result<uint64_t> ChecksumRange(uint64_t offset, uint64_t size) const;
  std::string BuildManifest(const std::string& content_id,
                            const std::vector<struct SectionRecord>& sections) const;

  std::unique_ptr<TempFile> file_;
  BinaryInfo info_;
  uint64_t weights_begin_ = 0;  // file offset of the weights section
  std::vector<PoolEntry> pool_;
  std::multimap<std::pair<uint64_t, uint64_t>, uint32_t> by_hash_;
  std::vector<GraphSpec> graphs_;
  std::vector<Artefact> artefacts_;
  WriteStats stats_;
  bool finished_ = false;
};

}  // namespace ortc::bundle
