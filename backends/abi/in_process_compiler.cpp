// The C table over a C++ backend: each function unpacks its arguments, calls the backend and
// writes the answer into the host's sink. Nothing throws across: an exception becomes a status.
#include "abi/in_process_compiler.h"

#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "abi/abi_status.h"
#include "abi/graph_view.h"

namespace ortc::backends::abi {
namespace {

struct InProcess {
  OrtcBackendCompiler table;  // first: the host's OrtcBackendCompiler* is this object
  const Backend* impl;
  std::string name, source, status, version;
};

const Backend& Impl(OrtcBackendCompiler* self) {
  return *reinterpret_cast<InProcess*>(self)->impl;
}

ProviderOptions ToOptions(const OrtcKeyValue* options, uint32_t n) {
  ProviderOptions out;
  for (uint32_t i = 0; i < n; ++i) out[options[i].key] = options[i].value;
  return out;
}

template <typename Body>
OrtcPluginStatus Guarded(Body body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Fail(Status(StatusCode::kOutOfMemory, "out of memory while compiling"));
  } catch (const std::exception& e) {
    return Fail(Status(StatusCode::kEpFail, std::string("internal error: ") + e.what()));
  }
}

Status NotHostView(const Backend& b) {
  return NotImplemented("backend " + std::string(b.name()) +
                        " is linked into ortc and compiles from the host's own graph, which this "
                        "view does not carry");
}

OrtcPluginStatus ValidateOptions(OrtcBackendCompiler* self, const OrtcKeyValue* options,
                                 uint32_t n) {
  return Guarded([&] {
    const Status s = Impl(self).ValidateOptions(ToOptions(options, n));
    return s.ok() ? ORTC_PLUGIN_OK : Fail(s);
  });
}

OrtcPluginStatus GetCapability(OrtcBackendCompiler* self, const OrtcGraphView* view,
                               const OrtcCapabilitySink* sink) {
  return Guarded([&] {
    const graph::Graph* g = HostGraph(view);
    if (!g) return Fail(NotHostView(Impl(self)));
    const std::vector<NodeSupport> answers = Impl(self).Capability(*g);
    for (uint32_t i = 0; i < answers.size(); ++i) {
      if (answers[i].supported)
        sink->claim(sink->user, i);
      else
        sink->refuse(sink->user, i, answers[i].reason.c_str());
    }
    return ORTC_PLUGIN_OK;
  });
}

OrtcPluginStatus Identity(OrtcBackendCompiler* self, const OrtcKeyValue* options, uint32_t n,
                          const OrtcIdentitySink* sink) {
  return Guarded([&] {
    auto identity = Impl(self).Identity(ToOptions(options, n));
    if (!identity.ok()) return Fail(identity.status());
    const BinaryIdentity& id = *identity;
    sink->set_sdk_version(sink->user, id.sdk_version.c_str());
    sink->set_hardware_architecture(sink->user, id.hardware_architecture.c_str());
    for (const auto& [k, v] : id.versions) sink->add_version(sink->user, k.c_str(), v.c_str());
    for (const auto& t : id.hardware_targets) sink->add_hardware_target(sink->user, t.c_str());
    for (const auto& [k, v] : id.properties) sink->add_property(sink->user, k.c_str(), v.c_str());
    return ORTC_PLUGIN_OK;
  });
}

void AddTensor(void (*add)(void*, const OrtcTensorDesc*), void* user,
               const bundle::TensorDescSpec& t) {
  std::vector<const char*> symbols;
  for (const auto& s : t.symbols) symbols.push_back(s.c_str());
  OrtcTensorDesc d{t.name.c_str(), t.dtype, static_cast<uint32_t>(t.dims.size()), t.dims.data(),
                   symbols.empty() ? nullptr : symbols.data()};
  add(user, &d);
}

// A weight in memory is handed over without a copy: the host keeps the source alive.
void AddWeight(const OrtcCompileSink* sink, const bundle::WeightSpec& w) {
  OrtcWeightDesc d{w.dtype, static_cast<uint32_t>(w.dims.size()), w.dims.data(), w.layout.c_str(),
                   w.alignment};
  OrtcBytes b{};
  if (w.bytes.in_memory()) {
    b.kind = ORTC_BYTES_HANDED_OVER;
    b.data = w.bytes.data();
    b.size = static_cast<uint64_t>(w.bytes.size());
    b.owner = new bundle::ByteSource(w.bytes);
    b.release = [](void* owner) { delete static_cast<bundle::ByteSource*>(owner); };
  } else {
    b.kind = ORTC_BYTES_FILE_REGION;
    b.size = static_cast<uint64_t>(w.bytes.size());
    b.file = w.bytes.file().c_str();
    b.offset = static_cast<uint64_t>(w.bytes.file_offset());
  }
  sink->add_weight(sink->user, &d, &b);
}

void Report(const CompiledGraph& c, const OrtcCompileSink* sink) {
  void* u = sink->user;
  sink->set_program(u, c.program.data(), c.program.size());
  for (const auto& t : c.inputs) AddTensor(sink->add_input, u, t);
  for (const auto& t : c.outputs) AddTensor(sink->add_output, u, t);
  for (const auto& w : c.weights) AddWeight(sink, w);
  sink->set_arena_bytes(u, c.arena_bytes);
  for (const auto& [name, bytes] : c.artefacts)
    sink->add_artefact(u, name.c_str(), bytes.data(), bytes.size());
  for (const auto& [k, v] : c.notes) sink->add_note(u, k.c_str(), v.c_str());
  for (const auto& [k, v] : c.binary_versions) sink->add_binary_version(u, k.c_str(), v.c_str());
  for (const auto& [k, n] : c.stats) sink->add_stat(u, k.c_str(), n);
  for (const auto& ch : c.choices) {
    std::vector<const char*> candidates;
    for (const auto& x : ch.candidates) candidates.push_back(x.c_str());
    OrtcTunableChoice t{ch.step.c_str(),
                        ch.key.c_str(),
                        ch.choice.c_str(),
                        candidates.data(),
                        static_cast<uint32_t>(candidates.size()),
                        ch.source.c_str()};
    sink->add_choice(u, &t);
  }
}

OrtcPluginStatus Compile(OrtcBackendCompiler* self, const OrtcGraphView* view,
                         const OrtcSubgraphRef* ref, const OrtcKeyValue* options, uint32_t n,
                         const OrtcCompileSink* sink) {
  return Guarded([&] {
    const graph::Model* model = HostModel(view);
    if (!model) return Fail(NotHostView(Impl(self)));
    Subgraph sg;
    sg.name = ref->name;
    sg.nodes.assign(ref->nodes, ref->nodes + ref->num_nodes);
    sg.inputs.assign(ref->inputs, ref->inputs + ref->num_inputs);
    sg.outputs.assign(ref->outputs, ref->outputs + ref->num_outputs);
    auto compiled = Impl(self).Compile(*model, sg, ToOptions(options, n),
                                       [sink](const std::string& step, int done, int total) {
                                         sink->progress(sink->user, step.c_str(), done, total);
                                       });
    if (!compiled.ok()) return Fail(compiled.status());
    Report(*compiled, sink);
    return ORTC_PLUGIN_OK;
  });
}

OrtcPluginStatus TuningVariants(OrtcBackendCompiler* self, const OrtcOptionSetSink* sink) {
  return Guarded([&] {
    for (const ProviderOptions& set : Impl(self).TuningVariants()) {
      std::vector<OrtcKeyValue> kv;
      for (const auto& [k, v] : set) kv.push_back({k.c_str(), v.c_str()});
      sink->add_set(sink->user, kv.data(), static_cast<uint32_t>(kv.size()));
    }
    return ORTC_PLUGIN_OK;
  });
}

OrtcPluginStatus OptionsWarning(OrtcBackendCompiler* self, const OrtcKeyValue* options, uint32_t n,
                                char* buffer, size_t capacity, size_t* length) {
  return Guarded([&] {
    const std::string w = Impl(self).OptionsWarning(ToOptions(options, n));
    *length = w.size();
    if (w.size() + 1 > capacity) return ORTC_PLUGIN_BUFFER_TOO_SMALL;
    std::memcpy(buffer, w.c_str(), w.size() + 1);
    return ORTC_PLUGIN_OK;
  });
}

const char* LastError(OrtcBackendCompiler*) {
  return LastErrorText();
}

}  // namespace

OrtcBackendCompiler* InProcessCompiler(const Backend& impl) {
  auto* p = new InProcess{};  // lives as long as the process, like the backend it serves
  p->impl = &impl;
  p->name = std::string(impl.name());
  p->source = std::string(impl.ep_source());
  p->status = std::string(impl.status_line());
  p->version = "ortc " ORTC_VERSION_STRING;
  OrtcBackendCompiler& t = p->table;
  t.abi_version = ORTC_BACKEND_ABI_VERSION;
  t.struct_size = sizeof(OrtcBackendCompiler);
  t.name = p->name.c_str();
  t.ep_source = p->source.c_str();
  t.status_line = p->status.c_str();
  t.version = p->version.c_str();
  t.flags = (impl.is_fallback() ? ORTC_COMPILER_FALLBACK : 0u) |
            (impl.can_compile() ? ORTC_COMPILER_CAN_COMPILE : 0u);
  t.validate_options = &ValidateOptions;
  t.get_capability = &GetCapability;
  t.identity = &Identity;
  t.compile = &Compile;
  t.tuning_variants = &TuningVariants;
  t.options_warning = &OptionsWarning;
  t.last_error = &LastError;
  return &t;
}

}  // namespace ortc::backends::abi
