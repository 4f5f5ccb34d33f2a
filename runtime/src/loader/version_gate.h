// The version gate: decides, per EPContext node and its binary, whether this machine can run
// it, and says why not with both sides named and the remedy.
#pragma once

#include "format/context_binary_reader.h"
#include "format/ep_context.h"
#include "ortc/runtime.h"

namespace ortc::loader {

// Backend name from an EPContext `source` ("ortc.cpu" -> "cpu"); empty when not ortc's.
std::string BackendOfSource(const std::string& source);

// What the CUDA gate reads from a binary's manifest (backends/cuda/cuda_binary_keys.h).
struct CudaBinaryFacts {
  int min_driver = 0;                         // cuDriverGetVersion format; 0 when not recorded
  std::vector<std::string> targets;           // "sm_80" (cubin), "compute_90" (PTX)
  std::string cudnn_version, cublas_version;  // empty when the programs do not call the library
};
CudaBinaryFacts CudaFactsOf(const fb::Manifest& manifest);
// The same from the manifest's contents: its backend versions and hardware targets.
CudaBinaryFacts CudaFactsOf(const std::vector<std::pair<std::string, std::string>>& versions,
                            const std::vector<std::string>& hardware_targets);

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
