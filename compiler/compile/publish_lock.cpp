// PublishLock: flock(LOCK_EX) on an O_DIRECTORY descriptor of the output folder (no lock file
// left behind); released by close.
#include "compile/publish_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>

namespace ortc::compile {

PublishLock::PublishLock(const std::filesystem::path& folder) {
  const std::filesystem::path dir = folder.empty() ? std::filesystem::path(".") : folder;
  fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0) return;
  int r;
  do {
    r = ::flock(fd_, LOCK_EX);
  } while (r != 0 && errno == EINTR);
  if (r != 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

PublishLock::~PublishLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace ortc::compile
