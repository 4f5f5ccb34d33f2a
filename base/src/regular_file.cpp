// See regular_file.h.
#include "base/regular_file.h"

namespace ortc::format {

Status CheckRegularFile(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (st.type() == fs::file_type::not_found) return NoSuchFile(path.string() + ": no such file");
  if (ec) return IoError(path.string() + ": " + ec.message());
  switch (st.type()) {
    case fs::file_type::regular:
      return Status::Ok();
    case fs::file_type::directory:
      return IoError(path.string() + ": is a folder, not a file");
    case fs::file_type::fifo:
      return IoError(path.string() + ": is a FIFO, not a regular file");
    case fs::file_type::character:
    case fs::file_type::block:
      return IoError(path.string() + ": is a device, not a regular file");
    default:
      return IoError(path.string() + ": not a regular file");
  }
}

}  // namespace ortc::format
