// The check every reader of a user-named file makes first: stat, not open, so a FIFO (whose
// open blocks until a writer comes) is refused instead of hanging the tool, and a device is
// refused instead of being read as data.
#pragma once

#include <filesystem>

#include "ortc/status.h"

namespace ortc::format {

// Ok for a regular file (or a link to one); NO_SUCHFILE when nothing is there; IO_ERROR naming
// what is there otherwise (a folder, FIFO, socket or device).
Status CheckRegularFile(const std::filesystem::path& path);

}  // namespace ortc::format
