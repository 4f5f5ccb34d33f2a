// Process-wide cache of opened context binaries: each file is mapped and verified once and
// shared by every session that uses it; it is unmapped when the last user goes.
#pragma once

#include <filesystem>
#include <memory>

#include "format/context_binary_reader.h"

namespace ortc::loader {

Result<std::shared_ptr<const format::ContextBinary>> OpenSharedBinary(
    const std::filesystem::path& path);

// How many times a binary file has been mapped and verified in this process (for tests).
int BinaryOpenCount();

}  // namespace ortc::loader
