// Writing a user-named file so that it is whole or absent: through a temporary file beside it,
// renamed over it only once everything was written and closed. A full disk, a file-size limit or
// a kill never leaves a truncated file at the final path, and a failed write removes its temp.
#pragma once

#include <filesystem>
#include <functional>
#include <ostream>

#include "ortc/status.h"

namespace ortc::format {

// `write` returns false when it could not produce the content; the stream's own failures are
// checked too. IO_ERROR naming `path` on any failure.
Status WriteFileAtomically(const std::filesystem::path& path,
                           const std::function<bool(std::ostream&)>& write);

}  // namespace ortc::format
