// Version and hardware checks.
#include "loader/version_gate.h"

#include <algorithm>

namespace ortc::loader {

Result<BackendVerdict> GateCpu(const std::vector<std::string>& targets,
                               const DeviceDescription& device, const std::string& where) {
  BackendVerdict v;
  v.backend = "cpu";
  // ISA levels in increasing order: a binary packed for a lower level than the device's best
  // runs, but a recompile would use the better instructions.
  static const std::vector<std::string> kLevels = {"sse4.2", "avx2", "avx512f"};
  auto rank = [&](const std::string& isa) {
    auto it = std::find(kLevels.begin(), kLevels.end(), isa);
    return it == kLevels.end() ? -1 : static_cast<int>(it - kLevels.begin());
  };
  int device_best = -1;
  for (const auto& isa : device.cpu_isa) device_best = std::max(device_best, rank(isa));
  for (const auto& target : targets) {
    // Weights packed for an ISA: a CPU without it reorders them once at the first run.
    if (target.rfind("packed:", 0) == 0) {
      const std::string isa = target.substr(7);
      if (std::find(device.cpu_isa.begin(), device.cpu_isa.end(), isa) == device.cpu_isa.end()) {
        v.verdict = Verdict::kPreferRecompilation;
        v.reason = "convolution weights packed for " + isa +
                   ", which this CPU lacks: they are repacked at the first run; recompile with "
                   "--target-isa native (or portable) for this CPU";
      }
      continue;
    }
    if (target == "generic-le") {
      if (!device.little_endian) {
        return NotImplemented(where + ": the binary needs a little-endian CPU (target " + target +
                              "); this device is big-endian");
      }
      continue;
    }
    // An ISA-specific packing: the device must offer that ISA.
    if (std::find(device.cpu_isa.begin(), device.cpu_isa.end(), target) == device.cpu_isa.end()) {
      std::string have;
      for (const auto& isa : device.cpu_isa) have += (have.empty() ? "" : ", ") + isa;
      const std::string how = target == "avx512_bf16"
                                  ? "recompile without --precision bf16 for this CPU"
                                  : "recompile for this CPU";
      return NotImplemented(where + ": compiled for CPU ISA " + target + "; this CPU offers [" +
                            have + "]: " + how);
    }
    if (rank(target) >= 0 && rank(target) < device_best) {
      v.verdict = Verdict::kPreferRecompilation;
      v.reason = "packed for " + target + "; this CPU also offers " + kLevels[device_best] +
                 ": recompile for it to use the better instructions";
    }
  }
  return v;
}

Result<BackendVerdict> Gate(const format::ContextBinary& bin, const format::EpContextNode& node,
                            const DeviceDescription& device) {
  BackendVerdict v;
  v.backend = BackendOfSource(node.source);
  const std::string where = "EPContext node '" + node.name + "'";
  const std::string bin_backend = bin.manifest().backend()->str();
  if (bin_backend != v.backend) {
    return InvalidGraph(where + " belongs to backend " + v.backend +
                        " but its binary was built for " + bin_backend);
  }
  const std::string expected_id = format::NotesValue(node.notes, "content_id");
  if (expected_id.empty())
    return InvalidGraph(where + ": notes carry no content_id; recompile the model");
  if (expected_id != bin.content_id()) {
    return InvalidGraph(where + ": stale pairing: the node expects binary content " + expected_id +
                        " but " + "the binary is " + std::string(bin.content_id()) +
                        "; ship the ctx model and binary from the same compile");
  }
  if (!bin.FindGraph(node.partition_name)) {
    return InvalidGraph(where + ": graph '" + node.partition_name + "' is not in the binary");
  }
  if (v.backend == "cuda") {
    auto cuda = GateCuda(CudaFactsOf(bin.manifest()), device, where);
    if (!cuda.ok()) return cuda.status();
    return *cuda;
  }
  if (v.backend == "cpu") {
    std::vector<std::string> targets;
    const auto* list = bin.manifest().hardware_targets();
    for (uint32_t i = 0; list && i < list->size(); ++i) targets.push_back(list->Get(i)->str());
    return GateCpu(targets, device, where);
  }
  return GatePlugin(bin, node, where);
}

}  // namespace ortc::loader
