// The version gate: decides, per EPContext node and its binary, whether this machine can run
// it, and says why not with both sides named and the remedy.
#pragma once

#include "format/compatibility_info.h"
#include "format/context_binary_reader.h"
#include "format/ep_context.h"
#include "ortc/runtime.h"

namespace ortc::loader {

// The facts of the formats the gate reads (schemas/format/), by the names the gate uses.
using format::BackendOfSource;
using format::CudaBinaryFacts;
using format::CudaFactsOf;

// The CUDA hardware and SDK fit, pure: an UNSUPPORTED verdict is an INVALID_GRAPH error whose
// message names both sides and the remedy; `where` prefixes it.
Result<BackendVerdict> GateCuda(const CudaBinaryFacts& bin, const DeviceDescription& device,
                                const std::string& where);

// The CPU fit of a binary packed for `targets` (its manifest's hardware_targets: "generic-le",
// or an ISA such as "avx2"), pure, like GateCuda.
Result<BackendVerdict> GateCpu(const std::vector<std::string>& targets,
                               const DeviceDescription& device, const std::string& where);

// Checks the pairing (backend, content id, graph) and the hardware fit. Errors are
// INVALID_GRAPH; an unsupported verdict is returned as an error too.
Result<BackendVerdict> Gate(const format::ContextBinary& bin, const format::EpContextNode& node,
                            const DeviceDescription& device);

}  // namespace ortc::loader
