// The version gate: decides, per EPContext node and its binary, whether this machine can run
// it, and says why not with both sides named and the remedy.
#pragma once

#include "format/context_binary_reader.h"
#include "format/ep_context.h"
#include "ortc/runtime.h"

namespace ortc::loader {

// Backend name from an EPContext `source` ("ortc.cpu" -> "cpu"); empty when not ortc's.
std::string BackendOfSource(const std::string& source);

// Checks the pairing (backend, content id, graph) and the hardware fit. Errors are
// INVALID_GRAPH; an unsupported verdict is returned as an error too.
Result<BackendVerdict> Gate(const format::ContextBinary& bin, const format::EpContextNode& node,
                            const DeviceDescription& device);

}  // namespace ortc::loader
