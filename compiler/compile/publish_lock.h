// Serialises the publishing of compiles into one folder. A compile publishes its binaries, then
// its ctx models, each by an atomic rename; two compiles into one folder (a CI matrix writing to
// a shared output, a retried job) could interleave those renames and leave a ctx model beside
// the other compile's binary. Holding an exclusive flock on the folder itself across the renames
// makes each compile's set of files land together: the folder ends with one compile's pair.
#pragma once

#include <filesystem>

namespace ortc::compile {

class PublishLock {
 public:
  // Blocks until no other compile publishes into `folder`. Where the file system refuses locks,
  // it holds none (the renames stay atomic one by one).
  explicit PublishLock(const std::filesystem::path& folder);
  ~PublishLock();
  PublishLock(const PublishLock&) = delete;
  PublishLock& operator=(const PublishLock&) = delete;
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace ortc::compile
