// The version gate: decides, per EPContext node and its binary, whether this machine can run
// it, and says why not with both sides named and the remedy.
#pragma once

#include "format/compatibility_info.h"
#include "format/context_binary_reader.h"
#include "format/ep_context.h"
#include "ortc/runtime.h"
#include "plugin/backend_library.h"

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

// The plugin library of a backend the runtime has no code of its own for (not cpu, not cuda),
// or an error saying where to put it; `where` names the node.
Result<std::shared_ptr<plugin::BackendLibrary>> PluginBackendFor(const std::string& backend,
                                                                 const std::string& where);

// What a plugin backend's binary recorded of its compile: the manifest's versions, hardware
// targets and properties, and (from the EPContext node, when there is one) SDK and architecture.
struct PluginBinaryFacts {
  std::string sdk_version, hardware_architecture;
  std::vector<std::pair<std::string, std::string>> versions;
  std::vector<std::string> hardware_targets;
  std::vector<std::pair<std::string, std::string>> properties;
};
// The plugin's own verdict on those facts (check_binary), as GateCuda's: unsupported is an error.
Result<BackendVerdict> GatePluginFacts(const std::string& backend, const PluginBinaryFacts& facts,
                                       const std::string& where);

// The fit of a binary of a backend that lives wholly in a plugin: the plugin's check_binary
// judges the versions the compile recorded (an unsupported verdict is an error, as above).
Result<BackendVerdict> GatePlugin(const format::ContextBinary& bin,
                                  const format::EpContextNode& node, const std::string& where);

// Checks the pairing (backend, content id, graph) and the hardware fit. Errors are
// INVALID_GRAPH; an unsupported verdict is returned as an error too.
Result<BackendVerdict> Gate(const format::ContextBinary& bin, const format::EpContextNode& node,
                            const DeviceDescription& device);

}  // namespace ortc::loader
