// The bytes of a constant of the graph view: the view either holds them or names a region of an
// external data file. The matcher reads small constants (scales, zero points) through this; the
// weights themselves are handed to the host as file regions and never read here.
#pragma once

#include <cstdint>
#include <string>

#include <ortc/ortc_backend_plugin.h>

namespace npu {

// Reads a constant's bytes into *bytes; at most max_bytes (a guard against reading a large
// tensor by mistake). False with *why when the value is not a constant or cannot be read.
bool ReadConstant(const OrtcValueView& value, uint64_t max_bytes, std::string* bytes,
                  std::string* why);

}  // namespace npu
