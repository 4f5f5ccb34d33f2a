// Calls through the compile-side table, and the sinks that turn its answers into the
// compiler's structures.
#include "abi/abi_backend.h"

#include <vector>

#include "abi/abi_status.h"
#include "abi/graph_view.h"
#include "plugin_abi/plugin_text.h"

namespace ortc::backends::abi {
namespace {

std::string Text(const char* s) {
  return s ? s : "";
}

struct KeyValues {
  explicit KeyValues(const ProviderOptions& options) {
    for (const auto& [k, v] : options) kv.push_back({k.c_str(), v.c_str()});
  }
  const OrtcKeyValue* data() const { return kv.data(); }
  uint32_t size() const { return static_cast<uint32_t>(kv.size()); }
  std::vector<OrtcKeyValue> kv;
};

bundle::TensorDescSpec TensorOf(const OrtcTensorDesc* d) {
  bundle::TensorDescSpec t;
  t.name = Text(d->name);
  t.dtype = d->dtype;
  if (d->dims) t.dims.assign(d->dims, d->dims + d->rank);
  if (d->symbols) {
    for (uint32_t i = 0; i < d->rank; ++i) t.symbols.push_back(Text(d->symbols[i]));
  }
  return t;
}

// What compile reports, gathered; a malformed report (bad bytes kind) is remembered as an error.
struct CompileResult {
  CompiledGraph graph;
  std::string error;
  CompileProgress progress;
};

bundle::ByteSource BytesOf(const OrtcBytes* b, std::string* error) {
  if (!b || (!b->data && b->size > 0 && b->kind != ORTC_BYTES_FILE_REGION)) {
    if (b && b->kind == ORTC_BYTES_HANDED_OVER && b->release) b->release(b->owner);
    *error = "a weight's bytes are missing (no bytes, or no data for a non-empty size)";
    return bundle::ByteSource::Memory(std::make_shared<const std::string>());
  }
  switch (b->kind) {
    case ORTC_BYTES_COPY:
      return bundle::ByteSource::Memory(std::make_shared<const std::string>(
          static_cast<const char*>(b->data), static_cast<size_t>(b->size)));
    case ORTC_BYTES_HANDED_OVER: {
      auto release = b->release;
      std::shared_ptr<const void> owner(b->owner, [release](const void* o) {
        if (release) release(const_cast<void*>(o));
      });
      return bundle::ByteSource::Owned(b->data, static_cast<size_t>(b->size), std::move(owner));
    }
    case ORTC_BYTES_FILE_REGION:
      if (b->file) {
        return bundle::ByteSource::FileRegion(b->file, static_cast<int64_t>(b->offset),
                                              static_cast<int64_t>(b->size));
      }
      break;
  }
  *error = "a weight's bytes have kind " + std::to_string(b->kind) + " (or no file)";
  return bundle::ByteSource::Memory(std::make_shared<const std::string>());
}

OrtcCompileSink MakeCompileSink(CompileResult* r) {
  OrtcCompileSink s{};
  s.user = r;
  // A plugin is trusted code, but a null where bytes belong is reported, not dereferenced.
  s.set_program = [](void* u, const void* data, uint64_t size) {
    auto* r = static_cast<CompileResult*>(u);
    if (!data && size)
      r->error = "set_program: no data for " + std::to_string(size) + " bytes";
    else
      r->graph.program.assign(static_cast<const char*>(data), size);
  };
  s.add_input = [](void* u, const OrtcTensorDesc* d) {
    auto* r = static_cast<CompileResult*>(u);
    if (!d)
      r->error = "add_input: no description";
    else
      r->graph.inputs.push_back(TensorOf(d));
  };
  s.add_output = [](void* u, const OrtcTensorDesc* d) {
    auto* r = static_cast<CompileResult*>(u);
    if (!d)
      r->error = "add_output: no description";
    else
      r->graph.outputs.push_back(TensorOf(d));
  };
  s.add_weight = [](void* u, const OrtcWeightDesc* d, const OrtcBytes* b) {
    auto* r = static_cast<CompileResult*>(u);
    if (!d) {
      r->error = "add_weight: no description";
      return;
    }
    bundle::WeightSpec w;
    w.dtype = d->dtype;
    if (d->dims) w.dims.assign(d->dims, d->dims + d->rank);
    if (d->layout) w.layout = d->layout;
    if (d->alignment) w.alignment = d->alignment;
    w.bytes = BytesOf(b, &r->error);
    r->graph.weights.push_back(std::move(w));
  };
  s.set_arena_bytes = [](void* u, uint64_t bytes) {
    static_cast<CompileResult*>(u)->graph.arena_bytes = bytes;
  };
  s.add_artefact = [](void* u, const char* name, const void* data, uint64_t size) {
    auto* r = static_cast<CompileResult*>(u);
    if (!data && size)
      r->error = "add_artefact '" + Text(name) + "': no data";
    else
      r->graph.artefacts.emplace_back(Text(name),
                                      std::string(static_cast<const char*>(data), size));
  };
  s.add_note = [](void* u, const char* k, const char* v) {
    static_cast<CompileResult*>(u)->graph.notes.emplace_back(Text(k), Text(v));
  };
  s.add_binary_version = [](void* u, const char* k, const char* v) {
    static_cast<CompileResult*>(u)->graph.binary_versions.emplace_back(Text(k), Text(v));
  };
  s.add_stat = [](void* u, const char* k, int64_t n) {
    static_cast<CompileResult*>(u)->graph.stats[Text(k)] = static_cast<int>(n);
  };
  s.add_choice = [](void* u, const OrtcTunableChoice* c) {
    if (!c) return;
    TunableChoice t{Text(c->step), Text(c->key), Text(c->choice), {}, Text(c->source)};
    for (uint32_t i = 0; c->candidates && i < c->num_candidates; ++i)
      t.candidates.push_back(Text(c->candidates[i]));
    static_cast<CompileResult*>(u)->graph.choices.push_back(std::move(t));
  };
  s.progress = [](void* u, const char* step, int32_t done, int32_t total) {
    auto* r = static_cast<CompileResult*>(u);
    if (r->progress) r->progress(Text(step), done, total);
  };
  return s;
}

}  // namespace

Status CheckCompilerTable(const OrtcBackendCompiler* t, const std::string& where) {
  if (!t) return InvalidGraph(where + ": the backend gave no compile-side table");
  if (t->abi_version != ORTC_BACKEND_ABI_VERSION || t->struct_size < sizeof(OrtcBackendCompiler)) {
    return InvalidGraph(where + ": the backend implements plugin ABI version " +
                        std::to_string(t->abi_version) + " but this ortc needs version " +
                        std::to_string(ORTC_BACKEND_ABI_VERSION) +
                        "; rebuild the backend against this ortc's ortc_backend_plugin.h");
  }
  const std::string name = Text(t->name);
  if (name.empty() ||
      name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos) {
    return InvalidGraph(where + ": backend name '" + name +
                        "' must be lower-case letters, digits and '_'");
  }
  if (Text(t->ep_source) != "ortc." + name) {
    return InvalidGraph(where + ": ep_source '" + Text(t->ep_source) + "' must be 'ortc." + name +
                        "' (the runtime finds a node's backend by it)");
  }
  if (!t->validate_options || !t->get_capability || !t->identity || !t->compile || !t->last_error) {
    return InvalidGraph(where +
                        ": the table lacks a required function (validate_options, "
                        "get_capability, identity, compile and last_error are required)");
  }
  return Status::Ok();
}

AbiBackend::AbiBackend(OrtcBackendCompiler* table, std::shared_ptr<void> keep_alive)
    : table_(table),
      keep_alive_(std::move(keep_alive)),
      name_(Text(table->name)),
      source_(Text(table->ep_source)),
      status_(Text(table->status_line)),
      version_(Text(table->version)) {}

Status AbiBackend::StatusOf(OrtcPluginStatus s) const {
  return FromPluginStatus(s, s == ORTC_PLUGIN_OK ? "" : Text(table_->last_error(table_)));
}

std::vector<NodeSupport> AbiBackend::Capability(const graph::Graph& g) const {
  const GraphView view(g, nullptr);
  std::vector<NodeSupport> answers(g.nodes.size(),
                                   NodeSupport::No("backend " + name_ + " gave no answer"));
  OrtcCapabilitySink sink{};
  sink.user = &answers;
  sink.claim = [](void* u, uint32_t node) {
    auto& a = *static_cast<std::vector<NodeSupport>*>(u);
    if (node < a.size()) a[node] = NodeSupport::Yes();
  };
  sink.refuse = [](void* u, uint32_t node, const char* reason) {
    auto& a = *static_cast<std::vector<NodeSupport>*>(u);
    if (node < a.size()) a[node] = NodeSupport::No(Text(reason));
  };
  const Status s = StatusOf(table_->get_capability(table_, view.view(), &sink));
  if (!s.ok()) {
    // The backend could not answer: it takes nothing, and every refusal says why.
    answers.assign(g.nodes.size(), NodeSupport::No("backend " + name_ + ": " + s.message()));
  }
  return answers;
}

Status AbiBackend::ValidateOptions(const ProviderOptions& options) const {
  const KeyValues kv(options);
  return StatusOf(table_->validate_options(table_, kv.data(), kv.size()));
}

Result<BinaryIdentity> AbiBackend::Identity(const ProviderOptions& options) const {
  BinaryIdentity id;
  OrtcIdentitySink sink{};
  sink.user = &id;
  sink.set_sdk_version = [](void* u, const char* v) {
    static_cast<BinaryIdentity*>(u)->sdk_version = Text(v);
  };
  sink.set_hardware_architecture = [](void* u, const char* v) {
    static_cast<BinaryIdentity*>(u)->hardware_architecture = Text(v);
  };
  sink.add_version = [](void* u, const char* k, const char* v) {
    static_cast<BinaryIdentity*>(u)->versions.emplace_back(Text(k), Text(v));
  };
  sink.add_hardware_target = [](void* u, const char* t) {
    static_cast<BinaryIdentity*>(u)->hardware_targets.push_back(Text(t));
  };
  sink.add_property = [](void* u, const char* k, const char* v) {
    static_cast<BinaryIdentity*>(u)->properties.emplace_back(Text(k), Text(v));
  };
  const KeyValues kv(options);
  const Status s = StatusOf(table_->identity(table_, kv.data(), kv.size(), &sink));
  if (!s.ok())
    return Status(s.code(), "backend " + name_ + " could not name its versions: " + s.message());
  return id;
}

Result<CompiledGraph> AbiBackend::Compile(const graph::Model& model, const Subgraph& subgraph,
                                          const ProviderOptions& options,
                                          const CompileProgress& progress) const {
  const GraphView view(model.graph, &model);
  const std::vector<int32_t> nodes(subgraph.nodes.begin(), subgraph.nodes.end());
  const OrtcSubgraphRef ref{subgraph.name.c_str(),
                            nodes.data(),
                            static_cast<uint32_t>(nodes.size()),
                            subgraph.inputs.data(),
                            static_cast<uint32_t>(subgraph.inputs.size()),
                            subgraph.outputs.data(),
                            static_cast<uint32_t>(subgraph.outputs.size())};
  CompileResult result;
  result.progress = progress;
  const OrtcCompileSink sink = MakeCompileSink(&result);
  const KeyValues kv(options);
  ORTC_RETURN_IF_ERROR(
      StatusOf(table_->compile(table_, view.view(), &ref, kv.data(), kv.size(), &sink)));
  if (!result.error.empty())
    return InvalidGraph("backend " + name_ + " compiled graph '" + subgraph.name +
                        "': " + result.error);
  return std::move(result.graph);
}

std::vector<ProviderOptions> AbiBackend::TuningVariants() const {
  std::vector<ProviderOptions> sets;
  if (!table_->tuning_variants) return sets;
  OrtcOptionSetSink sink{};
  sink.user = &sets;
  sink.add_set = [](void* u, const OrtcKeyValue* kv, uint32_t n) {
    ProviderOptions set;
    for (uint32_t i = 0; i < n; ++i) set[Text(kv[i].key)] = Text(kv[i].value);
    static_cast<std::vector<ProviderOptions>*>(u)->push_back(std::move(set));
  };
  if (table_->tuning_variants(table_, &sink) != ORTC_PLUGIN_OK) return {};
  return sets;
}

std::string AbiBackend::OptionsWarning(const ProviderOptions& options) const {
  if (!table_->options_warning) return {};
  const KeyValues kv(options);
  // A warning the plugin cannot give is no warning: the options themselves were validated.
  return plugin_abi::ReadPluginText([&](char* buf, size_t capacity, size_t* len) {
           return table_->options_warning(table_, kv.data(), kv.size(), buf, capacity, len);
         })
      .text;
}

}  // namespace ortc::backends::abi
