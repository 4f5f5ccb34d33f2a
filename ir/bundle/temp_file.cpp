// Temporary-file lifecycle, including removal from a signal handler.
#include "bundle/temp_file.h"

#include <fcntl.h>
#include <stdio.h>  // renameat2
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <random>
#include <string_view>

#include "base/temp_names.h"
#include "base/temp_registry.h"

namespace ortc::bundle {
namespace {

Status Errno(const std::string& what, const std::filesystem::path& p) {
  return IoError(what + " " + p.string() + ": " + std::strerror(errno));
}

// rename(2) that fails with EEXIST when `to` exists, atomically. renameat2's RENAME_NOREPLACE
// where the filesystem has it; link + unlink (link never replaces) where it does not.
int RenameNoReplace(const char* from, const char* to) {
  if (::renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return -1;
  if (::link(from, to) != 0) return -1;
  ::unlink(from);
  return 0;
}

}  // namespace

Result<std::unique_ptr<TempFile>> TempFile::Create(const std::filesystem::path& final_path) {
  auto f = std::unique_ptr<TempFile>(new TempFile());
  f->final_ = final_path;
  f->temp_ = format::TempPathFor(final_path);
  // Registered before it exists: a signal between the two must not leave the file behind.
  format::RegisterTempPath(f->temp_.string());
  f->fd_ = ::open(f->temp_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (f->fd_ < 0) {
    const Status s = Errno("cannot create", f->temp_);
    format::UnregisterTempPath(f->temp_.string());
    f->committed_ = true;  // nothing to remove
    return s;
  }
  return f;
}

TempFile::~TempFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) {
    ::unlink(temp_.c_str());
    format::UnregisterTempPath(temp_.string());
  }
}

Status TempFile::WriteAt(uint64_t offset, std::span<const std::byte> bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n =
        ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("write failed on", temp_);
    }
    done += static_cast<size_t>(n);
  }
  size_ = std::max<uint64_t>(size_, offset + bytes.size());
  return Status::Ok();
}

Status TempFile::Write(std::span<const std::byte> bytes) {
  return WriteAt(size_, bytes);
}

Status TempFile::ReadAt(uint64_t offset, std::span<std::byte> out) const {
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n =
        ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      return Errno("read failed on", temp_);
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status TempFile::Truncate(uint64_t size) {
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) return Errno("cannot truncate", temp_);
  size_ = size;
  return Status::Ok();
}

Status TempFile::Sync() {
  if (::fsync(fd_) != 0) return Errno("fsync failed on", temp_);
  return Status::Ok();
}

Status TempFile::Commit(Mode mode) {
  ORTC_RETURN_IF_ERROR(Sync());
  ::close(fd_);
  fd_ = -1;
  if (mode == Mode::kNoReplace) {
    if (RenameNoReplace(temp_.c_str(), final_.c_str()) != 0) {
      if (errno == EEXIST)
        return IoError("output " + final_.string() + " appeared while compiling (another writer?)");
      return Errno("cannot rename onto", final_);
    }
  } else if (::rename(temp_.c_str(), final_.c_str()) != 0) {
    return Errno("cannot rename onto", final_);
  }
  committed_ = true;
  format::UnregisterTempPath(temp_.string());
  std::filesystem::path dir = final_.parent_path();
  if (dir.empty()) dir = ".";
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);  // make the rename itself durable
    ::close(dfd);
  }
  return Status::Ok();
}

}  // namespace ortc::bundle
