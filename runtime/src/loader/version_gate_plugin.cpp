// The version gate for backends that live wholly in a plugin (an NPU's, examples/
// backend_skeleton): the plugin judges its own binaries. The runtime knows CPU and CUDA binaries
// itself; of any other backend it knows only that the plugin must be there and answer.
#include <vector>

#include "loader/version_gate.h"

namespace ortc::loader {
namespace {

std::vector<OrtcKeyValue> KeyValuesOf(
    const flatbuffers::Vector<flatbuffers::Offset<fb::KeyValue>>* list) {
  std::vector<OrtcKeyValue> out;
  for (uint32_t i = 0; list && i < list->size(); ++i) {
    const auto* kv = list->Get(i);
    out.push_back({kv->key() ? kv->key()->c_str() : "", kv->value() ? kv->value()->c_str() : ""});
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

Result<BackendVerdict> GatePlugin(const format::ContextBinary& bin,
                                  const format::EpContextNode& node, const std::string& where) {
  BackendVerdict v;
  v.backend = BackendOfSource(node.source);
  auto lib = PluginBackendFor(v.backend, where);
  if (!lib.ok()) return lib.status();
  OrtcBackend* table = (*lib)->table();
  if (!table->check_binary) return v;  // the plugin has no checks of its own

  const auto& m = bin.manifest();
  const std::vector<OrtcKeyValue> versions = KeyValuesOf(m.backend_versions());
  const std::vector<OrtcKeyValue> properties = KeyValuesOf(m.properties());
  std::vector<const char*> targets;
  for (uint32_t i = 0; m.hardware_targets() && i < m.hardware_targets()->size(); ++i)
    targets.push_back(m.hardware_targets()->Get(i)->c_str());
  OrtcBinaryFacts facts{};
  facts.struct_size = sizeof(facts);
  facts.sdk_version = node.ep_sdk_version.c_str();
  facts.hardware_architecture = node.hardware_architecture.c_str();
  facts.versions = versions.data();
  facts.num_versions = static_cast<uint32_t>(versions.size());
  facts.hardware_targets = targets.data();
  facts.num_hardware_targets = static_cast<uint32_t>(targets.size());
  facts.properties = properties.data();
  facts.num_properties = static_cast<uint32_t>(properties.size());

  int32_t verdict = ORTC_BINARY_OPTIMAL;
  std::string reason(1024, '\0');
  size_t length = 0;
  OrtcPluginStatus s =
      table->check_binary(table, &facts, &verdict, reason.data(), reason.size(), &length);
  if (s == ORTC_PLUGIN_BUFFER_TOO_SMALL && length < (1u << 20)) {
    reason.assign(length + 1, '\0');
    s = table->check_binary(table, &facts, &verdict, reason.data(), reason.size(), &length);
  }
  ORTC_RETURN_IF_ERROR((*lib)->StatusOf(s, where + ": checking the binary"));
  reason.resize(std::min(length, reason.size()));
  switch (verdict) {
    case ORTC_BINARY_OPTIMAL:
      return v;
    case ORTC_BINARY_PREFER_RECOMPILATION:
      v.verdict = Verdict::kPreferRecompilation;
      v.reason = reason;
      return v;
    default:
      return InvalidGraph(where + ": backend " + v.backend + " cannot run this binary: " + reason +
                          " (verdict: unsupported)");
  }
}

}  // namespace ortc::loader
