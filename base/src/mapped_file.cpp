// mmap-based file mapping.
#include "base/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ortc::format {

Result<std::shared_ptr<MappedFile>> MappedFile::Open(const std::filesystem::path& path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever; the
  // regular-file check below then refuses it (and devices). No effect on regular files.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return NoSuchFile(path.string() + ": no such file");
    return IoError(path.string() + ": cannot open: " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return IoError(path.string() + ": not a regular file");
  }
  auto file = std::shared_ptr<MappedFile>(new MappedFile());
  file->path_ = path;
  file->size_ = static_cast<size_t>(st.st_size);
  if (file->size_ > 0) {
    void* p = ::mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      return IoError(path.string() + ": cannot map: " + std::strerror(errno));
    }
    file->data_ = static_cast<const std::byte*>(p);
    file->mapped_ = true;
  }
  ::close(fd);
  return file;
}

std::shared_ptr<MappedFile> MappedFile::FromBytes(std::string bytes) {
  auto file = std::shared_ptr<MappedFile>(new MappedFile());
  file->owned_ = std::move(bytes);
  file->data_ = reinterpret_cast<const std::byte*>(file->owned_.data());
  file->size_ = file->owned_.size();
  return file;
}

MappedFile::~MappedFile() {
  if (mapped_) ::munmap(const_cast<std::byte*>(data_), size_);
}

}  // namespace ortc::format
