// Chunked reading of weight bytes.
#include "bundle/byte_source.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace ortc::bundle {

ByteSource ByteSource::Memory(std::shared_ptr<const std::string> bytes) {
  ByteSource s;
  s.memory_ = std::move(bytes);
  return s;
}

ByteSource ByteSource::FileRegion(std::filesystem::path file, int64_t offset, int64_t length) {
  ByteSource s;
  s.file_ = std::move(file);
  s.offset_ = offset;
  s.length_ = length;
  return s;
}

Status ByteSource::ForEachChunk(
    const std::function<Status(std::span<const std::byte>)>& sink) const {
  if (memory_) {
    const auto* p = reinterpret_cast<const std::byte*>(memory_->data());
    for (size_t done = 0; done < memory_->size(); done += kStreamChunkBytes) {
      ORTC_RETURN_IF_ERROR(sink({p + done, std::min(kStreamChunkBytes, memory_->size() - done)}));
    }
    return Status::Ok();
  }
  const int fd = ::open(file_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError(file_.string() + ": cannot open: " + std::strerror(errno));
  // Sequential reads of data used once: tell the kernel, so it reads ahead and drops pages.
  ::posix_fadvise(fd, offset_, length_, POSIX_FADV_SEQUENTIAL);
  std::vector<std::byte> buf(std::min<int64_t>(kStreamChunkBytes, std::max<int64_t>(length_, 1)));
  int64_t done = 0;
  Status status;
  while (done < length_ && status.ok()) {
    const size_t want = static_cast<size_t>(std::min<int64_t>(buf.size(), length_ - done));
    const ssize_t got = ::pread(fd, buf.data(), want, offset_ + done);
    if (got <= 0) {
      status = IoError(
          file_.string() + ": read failed at offset " + std::to_string(offset_ + done) +
          (got == 0 ? " (file shorter than expected)" : ": " + std::string(std::strerror(errno))));
      break;
    }
    status = sink({buf.data(), static_cast<size_t>(got)});
    done += got;
  }
  ::posix_fadvise(fd, offset_, length_, POSIX_FADV_DONTNEED);
  ::close(fd);
  return status;
}

Result<std::shared_ptr<const std::string>> ByteSource::ReadAll() const {
  if (memory_) return memory_;
  auto out = std::make_shared<std::string>();
  out->reserve(static_cast<size_t>(length_));
  Status s = ForEachChunk([&](std::span<const std::byte> c) {
    out->append(reinterpret_cast<const char*>(c.data()), c.size());
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return std::shared_ptr<const std::string>(std::move(out));
}

}  // namespace ortc::bundle
