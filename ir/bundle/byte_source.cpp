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
  s.data_ = reinterpret_cast<const std::byte*>(bytes->data());
  s.size_ = bytes->size();
  s.owner_ = bytes;
  s.memory_ = std::move(bytes);
  return s;
}

ByteSource ByteSource::Owned(const void* data, size_t size, std::shared_ptr<const void> owner) {
  ByteSource s;
  s.data_ = static_cast<const std::byte*>(data);
  s.size_ = size;
  s.owner_ = std::move(owner);
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
  if (in_memory()) {
    for (size_t done = 0; done < size_; done += kStreamChunkBytes)
      ORTC_RETURN_IF_ERROR(sink({data_ + done, std::min(kStreamChunkBytes, size_ - done)}));
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
  if (in_memory())
    return std::make_shared<const std::string>(reinterpret_cast<const char*>(data_), size_);
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
