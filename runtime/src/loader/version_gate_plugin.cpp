// The version gate for backends that live wholly in a plugin (an NPU's, examples/
// backend_skeleton): the plugin judges its own binaries. The runtime knows CPU and CUDA binaries
// itself; of any other backend it knows only that the plugin must be there and answer.
#include <vector>

#include "loader/version_gate.h"

namespace ortc::loader {
namespace {

std::vector<std::pair<std::string, std::string>> PairsOf(
    const flatbuffers::Vector<flatbuffers::Offset<fb::KeyValue>>* list) {
  std::vector<std::pair<std::string, std::string>> out;
  for (uint32_t i = 0; list && i < list->size(); ++i) {
    const auto* kv = list->Get(i);
    out.emplace_back(kv->key() ? kv->key()->str() : "", kv->value() ? kv->value()->str() : "");
  }
  return out;
}

}  // namespace

Result<std::shared_ptr<plugin::BackendLibrary>> PluginBackendFor(const std::string& backend,
                                                                 const std::string& where) {
  auto lib = plugin::GetBackend(backend);
  if (lib.ok()) return lib;
  return InvalidGraph(where + " needs backend " + backend +
                      ", which this runtime does not have (verdict: unsupported): put "
                      "libortc_backend_" +
                      backend +
                      ".so in a folder of ORTC_BACKEND_PATH (ortc --backend-path DIR), or "
                      "recompile with --ep cpu. " +
                      lib.status().message());
}

Result<BackendVerdict> GatePluginFacts(const std::string& backend, const PluginBinaryFacts& f,
                                       const std::string& where) {
  BackendVerdict v;
  v.backend = backend;
  auto lib = PluginBackendFor(backend, where);
  if (!lib.ok()) return lib.status();
  OrtcBackend* table = (*lib)->table();
  if (!table->check_binary) return v;  // the plugin has no checks of its own

  auto key_values = [](const std::vector<std::pair<std::string, std::string>>& list) {
    std::vector<OrtcKeyValue> out;
    for (const auto& [k, value] : list) out.push_back({k.c_str(), value.c_str()});
    return out;
  };
  const std::vector<OrtcKeyValue> versions = key_values(f.versions);
  const std::vector<OrtcKeyValue> properties = key_values(f.properties);
  std::vector<const char*> targets;
  for (const auto& t : f.hardware_targets) targets.push_back(t.c_str());
  OrtcBinaryFacts facts{};
  facts.struct_size = sizeof(facts);
  facts.sdk_version = f.sdk_version.c_str();
  facts.hardware_architecture = f.hardware_architecture.c_str();
  facts.versions = versions.data();
  facts.num_versions = static_cast<uint32_t>(versions.size());
  facts.hardware_targets = targets.data();
  facts.num_hardware_targets = static_cast<uint32_t>(targets.size());
  facts.properties = properties.data();
  facts.num_properties = static_cast<uint32_t>(properties.size());

  int32_t verdict = ORTC_BINARY_OPTIMAL;
  auto reason = (*lib)->CheckBinary(facts, &verdict);
  if (!reason.ok()) return reason.status().WithContext(where);
  switch (verdict) {
    case ORTC_BINARY_OPTIMAL:
      return v;
    case ORTC_BINARY_PREFER_RECOMPILATION:
      v.verdict = Verdict::kPreferRecompilation;
      v.reason = *reason;
      return v;
    default:
      return InvalidGraph(where + ": backend " + backend + " cannot run this binary: " + *reason +
                          " (verdict: unsupported)");
  }
}

Result<BackendVerdict> GatePlugin(const format::ContextBinary& bin,
                                  const format::EpContextNode& node, const std::string& where) {
  PluginBinaryFacts f;
  f.sdk_version = node.ep_sdk_version;
  f.hardware_architecture = node.hardware_architecture;
  const auto& m = bin.manifest();
  f.versions = PairsOf(m.backend_versions());
  f.properties = PairsOf(m.properties());
  for (uint32_t i = 0; m.hardware_targets() && i < m.hardware_targets()->size(); ++i)
    f.hardware_targets.push_back(m.hardware_targets()->Get(i)->str());
  return GatePluginFacts(BackendOfSource(node.source), f, where);
}

}  // namespace ortc::loader
