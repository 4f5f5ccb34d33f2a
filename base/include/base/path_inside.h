// Resolving a path a model file names (a context binary, external data) relative to the model's
// folder, refusing what would read elsewhere: a NUL byte, "..", and anything whose symbolic
// links resolve outside the folder; a symbolic link loop is named as one.
#pragma once

#include <filesystem>
#include <string>

#include "ortc/status.h"

namespace ortc::format {

// `subject` opens every message ("external data location"), followed by the quoted path.
// Errors: INVALID_GRAPH for a path that leaves the folder, IO_ERROR for a symbolic link loop or
// a folder that cannot be resolved.
Result<std::filesystem::path> ResolveInside(const std::filesystem::path& dir,
                                            const std::string& rel_text,
                                            const std::string& subject);

}  // namespace ortc::format
