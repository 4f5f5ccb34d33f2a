// Atomic output files: written under a temporary name in the target folder, fsynced, then
// renamed over the final name. Until Commit the final name is untouched; an error, an
// exception or SIGINT/SIGTERM/SIGHUP removes the temporary file. SIGKILL leaves a file named
// ".<name>.ortc-tmp-<host>-<pid>-<random>", which never looks like a valid output and which
// RemoveStaleTempFiles deletes once that process is gone.
#pragma once

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/temp_names.h"
#include "ortc/status.h"

namespace ortc::bundle {

class TempFile {
 public:
  static Result<std::unique_ptr<TempFile>> Create(const std::filesystem::path& final_path);
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  int fd() const { return fd_; }
  const std::filesystem::path& temp_path() const { return temp_; }
  const std::filesystem::path& final_path() const { return final_; }

  Status WriteAt(uint64_t offset, std::span<const std::byte> bytes);
  Status Write(std::span<const std::byte> bytes);  // at the current end
  Status ReadAt(uint64_t offset, std::span<std::byte> out) const;
  Status Truncate(uint64_t size);
  uint64_t size() const { return size_; }
  Status Sync();  // fsync the data
  // Closes, renames onto the final name and fsyncs the folder. kReplace replaces a file already
  // there; kNoReplace fails (ALREADY_EXISTS-style IoError naming it) when one exists, checked
  // atomically with the rename itself, so of concurrent writers exactly one wins.
  enum class Mode { kReplace, kNoReplace };
  Status Commit(Mode mode = Mode::kReplace);

 private:
  TempFile() = default;
  int fd_ = -1;
  uint64_t size_ = 0;
  bool committed_ = false;
  std::filesystem::path temp_, final_;
};

// Temporary names and the removal of dead writers' files: format/temp_names.h.
using format::IsTempFileName;
using format::RemoveStaleTempFiles;

}  // namespace ortc::bundle
