// Temporary-file lifecycle, including removal from a signal handler.
#include "bundle/temp_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <random>

namespace ortc::bundle {
namespace {

// Live temp paths, kept in fixed storage so the signal handler can read them safely. A slot is
// claimed, then its path written, then published: the handler reads only published paths.
constexpr int kSlots = 64;
constexpr size_t kPathMax = 4096;
std::array<std::array<char, kPathMax>, kSlots> g_paths;
std::array<std::atomic<bool>, kSlots> g_claimed;
std::array<std::atomic<bool>, kSlots> g_published;

int Register(const std::string& path) {
  if (path.size() >= kPathMax) return -1;
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (g_claimed[i].compare_exchange_strong(expected, true)) {
      std::memcpy(g_paths[i].data(), path.c_str(), path.size() + 1);
      g_published[i].store(true, std::memory_order_release);
      return i;
    }
  }
  return -1;
}

void Unregister(const std::string& path) {
  for (int i = 0; i < kSlots; ++i) {
    if (g_published[i] && path == g_paths[i].data()) {
      g_published[i] = false;
      g_claimed[i] = false;
    }
  }
}

extern "C" void RemoveTempFilesAndDie(int sig) {
  for (int i = 0; i < kSlots; ++i) {
    if (g_published[i].load(std::memory_order_acquire)) ::unlink(g_paths[i].data());
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

Status Errno(const std::string& what, const std::filesystem::path& p) {
  return IoError(what + " " + p.string() + ": " + std::strerror(errno));
}

}  // namespace

void InstallTempFileCleanup() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, RemoveTempFilesAndDie);
}

Result<std::unique_ptr<TempFile>> TempFile::Create(const std::filesystem::path& final_path) {
  auto f = std::unique_ptr<TempFile>(new TempFile());
  f->final_ = final_path;
  std::random_device rd;
  std::filesystem::path dir = final_path.parent_path();
  if (dir.empty()) dir = ".";
  f->temp_ = dir / ("." + final_path.filename().string() + ".ortc-tmp-" +
                    std::to_string(::getpid()) + "-" + std::to_string(rd()));
  // Registered before it exists: a signal between the two must not leave the file behind.
  Register(f->temp_.string());
  f->fd_ = ::open(f->temp_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (f->fd_ < 0) {
    const Status s = Errno("cannot create", f->temp_);
    Unregister(f->temp_.string());
    f->committed_ = true;  // nothing to remove
    return s;
  }
  return f;
}

TempFile::~TempFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) {
    ::unlink(temp_.c_str());
    Unregister(temp_.string());
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

Status TempFile::Commit() {
  ORTC_RETURN_IF_ERROR(Sync());
  ::close(fd_);
  fd_ = -1;
  if (::rename(temp_.c_str(), final_.c_str()) != 0) return Errno("cannot rename onto", final_);
  committed_ = true;
  Unregister(temp_.string());
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
