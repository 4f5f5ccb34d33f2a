// Model -> ExecGraph, with EPContext routing and the version gate.
#include "loader/graph_loader.h"

#include <unistd.h>

#include <map>

#include "cpu_program_generated.h"
#include "exec/plugin_node.h"
#include "format/cpu_program_validator.h"
#include "format/ep_context.h"
#include "loader/binary_cache.h"
#include "loader/cpu_program_loader.h"
#include "loader/plain_subgraph.h"
#include "loader/tensor_proto.h"
#include "loader/version_gate.h"

namespace ortc::loader {
namespace {

namespace fs = std::filesystem;
namespace fbc = ortc::fb::cpu;

TensorInfo InfoOf(const onnx::ValueInfoProto& vi) {
  TensorInfo info{vi.name(), ValueType::kTensor, DataType::kUndefined, {}};
  const onnx::TypeProto* type = &vi.type();
  if (type->has_optional_type()) {
    info.type = ValueType::kOptional;
    type = &type->optional_type().elem_type();
  }
  if (type->has_sequence_type()) {
    if (info.type == ValueType::kTensor) info.type = ValueType::kSequence;
    type = &type->sequence_type().elem_type();
  }
  if (type->has_tensor_type()) {
    info.dtype = static_cast<DataType>(type->tensor_type().elem_type());
    if (info.type != ValueType::kTensor) return info;  // element shapes vary
    for (const auto& d : type->tensor_type().shape().dim())
      info.shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
  }
  return info;
}

// Bytes of physical memory: the default limit on one tensor (no single output can be bigger
// and still be computed without swapping the machine to a halt).
uint64_t PhysicalMemory() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

class Builder {
 public:
  Builder(const onnx::ModelProto& m, const fs::path* dir, const SessionOptions& o, bool gate_only)
      : model_(m), dir_(dir), options_(o), gate_only_(gate_only) {
    // CUDA is detected only when a CUDA node needs it: CPU-only models never load the plugin.
    device_ = o.device ? *o.device : DeviceDescription::DetectHost();
    for (const auto& op : m.opset_import())
      opsets_[op.domain() == "ai.onnx" ? "" : op.domain()] = op.version();
  }

  Result<LoadedModel> Build() {
    const auto& g = model_.graph();
    auto& eg = out_.graph;
    eg.max_tensor_bytes = options_.max_tensor_bytes ? options_.max_tensor_bytes : PhysicalMemory();
    for (const auto& t : g.initializer()) {
      auto tensor = TensorFromProto(t, dir_);
      if (!tensor.ok()) return tensor.status().WithContext("initializer '" + t.name() + "'");
      eg.constants[eg.AddValue(t.name())] = std::move(tensor).value();
    }
    for (const auto& in : g.input()) {
      if (eg.FindValue(in.name()) >= 0) continue;  // an initializer listed as input
      const int v = eg.AddValue(in.name());
      eg.inputs.push_back(v);
      out_.inputs.push_back(InfoOf(in));
    }
    auto fixed = ReadFixedInputs(model_);
    if (!fixed.ok()) return fixed.status();
    out_.fixed_inputs = std::move(fixed).value();
    ORTC_RETURN_IF_ERROR(OpenMainBinaries());
    for (const auto& node : g.node()) {
      if (format::IsEpContextNode(node)) {
        ORTC_RETURN_IF_ERROR(ExpandEpContext(node));
      } else {
        ORTC_RETURN_IF_ERROR(AddOnnxNode(node));
      }
    }
    for (const auto& o : g.output()) {
      const int v = eg.FindValue(o.name());
      if (v < 0 && gate_only_) continue;  // programs were not expanded
      if (v < 0) return InvalidGraph("graph output '" + o.name() + "' is produced by nothing");
      eg.outputs.push_back(v);
      out_.outputs.push_back(InfoOf(o));
    }
    if (!gate_only_) ORTC_RETURN_IF_ERROR(CheckDataflow());
    if (!gate_only_) ORTC_RETURN_IF_ERROR(exec::BindKernels(&eg));
    out_.report.arena_bytes = eg.arena_bytes;
    return std::move(out_);
  }

 private:
  // What the compiler's checker enforces on ONNX graphs, for the graph as it will run (plain
  // nodes and expanded programs): ops in an order where every value is written before it is
  // read, by exactly one op, and every graph output written. A graph that breaks it would read
  // unset values or let the last writer win.
  Status CheckDataflow() const {
    const auto& eg = out_.graph;
    std::vector<bool> written(eg.value_names.size(), false);
    for (size_t v = 0; v < written.size(); ++v) written[v] = !eg.constants[v].empty();
    for (int v : eg.inputs) written[static_cast<size_t>(v)] = true;
    for (const auto& op : eg.ops) {
      const std::string node = "node '" + op.name + "' (" + op.op_type + ")";
      for (int v : op.inputs) {
        if (v >= 0 && !written[static_cast<size_t>(v)])
          return InvalidGraph(node + ": input '" + eg.value_names[v] +
                              "' is produced by no earlier node, initializer or graph input");
      }
      for (int v : op.outputs) {
        if (v < 0) continue;
        if (written[static_cast<size_t>(v)])
          return InvalidGraph(node + ": output '" + eg.value_names[v] +
                              "' is already produced by an initializer, a graph input or an "
                              "earlier node (ONNX values have one producer)");
        written[static_cast<size_t>(v)] = true;
      }
    }
    for (int v : eg.outputs) {
      if (!written[static_cast<size_t>(v)])
        return InvalidGraph("graph output '" + eg.value_names[v] + "' is produced by nothing");
    }
    return Status::Ok();
  }

  int ValueFor(const std::string& name) {
    int v = out_.graph.FindValue(name);
    return v >= 0 ? v : out_.graph.AddValue(name);
  }

  Status AddOnnxNode(const onnx::NodeProto& node) {
    out_.report.onnx_nodes++;
    const std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
    if (node.op_type() == "Constant" && domain.empty()) {
      if (node.output_size() != 1 || node.output(0).empty())
        return InvalidGraph("Constant node '" + node.name() + "' must have exactly one output");
      auto t = ConstantNodeValue(node, dir_);
      if (!t.ok()) return t.status();
      out_.graph.constants[ValueFor(node.output(0))] = std::move(t).value();
      return Status::Ok();
    }
    exec::ExecOp op;
    op.name = node.name().empty() ? node.op_type() : node.name();
    op.op_type = node.op_type();
    op.domain = domain;
    op.version = static_cast<int>(opsets_.count(domain) ? opsets_[domain] : 0);
    for (const auto& i : node.input()) op.inputs.push_back(i.empty() ? -1 : ValueFor(i));
    auto outer = [this](const std::string& name) -> Result<int> { return ValueFor(name); };
    ORTC_RETURN_IF_ERROR(
        AddNodeAttributes(node, dir_, opsets_, outer, &op).WithContext("node '" + op.name + "'"));
    for (const auto& o : node.output()) op.outputs.push_back(o.empty() ? -1 : ValueFor(o));
    out_.graph.ops.push_back(std::move(op));
    return Status::Ok();
  }

  // Main context nodes name the binaries; they are opened (once) before any node is expanded.
  Status OpenMainBinaries() {
    for (const auto& node : model_.graph().node()) {
      if (!format::IsEpContextNode(node)) continue;
      auto ep = format::EpContextNode::FromNodeProto(node);
      if (!ep.ok()) return ep.status();
      const std::string backend = BackendOfSource(ep->source);
      if (backend.empty()) {
        return InvalidGraph("EPContext node '" + ep->name + "' was generated by '" + ep->source +
                            "', not by ortc; this runtime runs only ortc's EPContext nodes");
      }
      // A backend wholly in a plugin: without the plugin nothing of its binary can be judged.
      if (backend != "cpu" && backend != "cuda") {
        auto lib = PluginBackendFor(backend, "EPContext node '" + ep->name + "'");
        if (!lib.ok()) return lib.status();
      }
      if (ep->main_context != 1) continue;
      if (bins_.count(ep->source)) {
        return InvalidGraph("EPContext node '" + ep->name + "' is a second main context for " +
                            ep->source);
      }
      std::shared_ptr<const format::ContextBinary> bin;
      std::string where;
      if (ep->embed_mode == 1) {
        auto b = format::ContextBinary::Open(format::MappedFile::FromBytes(ep->ep_cache_context));
        if (!b.ok())
          return b.status().WithContext("EPContext node '" + ep->name +
                                        "': embedded payload corrupt");
        bin = *b;
        where = "<embedded in " + ep->name + ">";
      } else {
        if (!dir_) {
          return InvalidArgument(
              "the model was loaded from a buffer: set context_file_path so the binary '" +
              ep->ep_cache_context + "' can be found");
        }
        auto path = format::ResolveContextBinary(*dir_, ep->ep_cache_context, ep->name);
        if (!path.ok()) return path.status();
        auto b = options_.share_ep_contexts ? OpenSharedBinary(*path)
                                            : format::ContextBinary::OpenFile(*path);
        if (!b.ok()) return b.status().WithContext("EPContext node '" + ep->name + "'");
        bin = *b;
        where = path->string();
      }
      bins_[ep->source] = bin;
      bin_paths_[ep->source] = where;
      out_.graph.keep_alive.push_back(bin);
    }
    return Status::Ok();
  }

  Status ExpandEpContext(const onnx::NodeProto& node) {
    out_.report.ep_context_nodes++;
    auto ep = format::EpContextNode::FromNodeProto(node);
    if (!ep.ok()) return ep.status();
    auto it = bins_.find(ep->source);
    if (it == bins_.end())
      return InvalidGraph("EPContext node '" + ep->name + "' has no main context node for " +
                          ep->source);
    const auto& bin = it->second;
    const std::string backend = BackendOfSource(ep->source);
    if (backend == "cuda" && !options_.device && !plugin_device_detected_) {
      device_ = DeviceDescription::Detect();
      plugin_device_detected_ = true;
    }
    auto verdict = Gate(*bin, *ep, device_);
    if (!verdict.ok()) return verdict.status();
    verdict->binary = bin_paths_[ep->source];
    if (verdict->verdict == Verdict::kPreferRecompilation &&
        options_.policy == VerdictPolicy::kRequireOptimal) {
      return Status(StatusCode::kModelRequiresCompilation,
                    "EPContext node '" + ep->name + "': " + verdict->reason +
                        " (the policy requires an optimal binary)");
    }
    bool seen = false;
    for (const auto& b : out_.report.backends)
      seen = seen || (b.backend == verdict->backend && b.binary == verdict->binary);
    if (!seen) out_.report.backends.push_back(*verdict);
    if (gate_only_) return Status::Ok();
    if (backend != "cpu") return AddPluginGraph(*ep, backend, bin);

    const auto* graph = bin->FindGraph(ep->partition_name);
    const auto bytes = bin->ProgramBytes(*graph);
    flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    if (!fbc::VerifyProgramBuffer(verifier))
      return InvalidGraph("graph '" + ep->partition_name + "': the CPU program is corrupt");
    const auto* program = fbc::GetProgram(bytes.data());
    ORTC_RETURN_IF_ERROR(format::ValidateCpuProgram(*program,
                                                    graph->weights() ? graph->weights()->size() : 0,
                                                    "graph '" + ep->partition_name + "'"));
    if (program->inputs()->size() != ep->inputs.size() ||
        program->outputs()->size() != ep->outputs.size()) {
      return InvalidGraph(
          "EPContext node '" + ep->name + "' has " + std::to_string(ep->inputs.size()) +
          " inputs and " + std::to_string(ep->outputs.size()) + " outputs but graph '" +
          ep->partition_name + "' has " + std::to_string(program->inputs()->size()) + " and " +
          std::to_string(program->outputs()->size()));
    }
    const auto& values = *program->values();
    std::vector<int> map(values.size(), -1);
    for (uint32_t k = 0; k < program->inputs()->size(); ++k) {
      const int pv = program->inputs()->Get(k);
      if (pv < 0 || static_cast<uint32_t>(pv) >= values.size())
        return InvalidGraph("program input index out of range");
      map[pv] = ValueFor(ep->inputs[k]);
    }
    for (uint32_t k = 0; k < program->outputs()->size(); ++k) {
      const int pv = program->outputs()->Get(k);
      if (pv < 0 || static_cast<uint32_t>(pv) >= values.size())
        return InvalidGraph("program output index out of range");
      if (map[pv] >= 0) {
        // An output that is also an input: copy through an Identity.
        exec::ExecOp id;
        id.name = ep->name + "/passthrough";
        id.op_type = "Identity";
        id.inputs = {map[pv]};
        id.outputs = {ValueFor(ep->outputs[k])};
        out_.graph.ops.push_back(id);
        continue;
      }
      map[pv] = ValueFor(ep->outputs[k]);
    }
    // The program's static memory plan, placed after the arenas of earlier programs.
    const int64_t arena_base = out_.graph.arena_bytes;
    out_.graph.arena_bytes += static_cast<int64_t>((program->arena_bytes() + 63) / 64 * 64);
    const ProgramWeights weights{bin.get(), graph->weights(),
                                 std::shared_ptr<const void>(bin, bin.get()), ep->partition_name};
    for (uint32_t i = 0; i < values.size(); ++i) {
      if (map[i] >= 0) continue;
      const auto* v = values.Get(i);
      map[i] =
          out_.graph.AddValue(ep->name + "/" + (v->name() ? v->name()->str() : std::to_string(i)));
      if (v->kind() == fbc::ValueKind::Intermediate && v->arena_offset() >= 0 &&
          v->byte_size() >= 0 &&
          static_cast<uint64_t>(v->arena_offset() + v->byte_size()) <= program->arena_bytes()) {
        out_.graph.arena_offset[map[i]] = arena_base + v->arena_offset();
        out_.graph.arena_size[map[i]] = v->byte_size();
      }
      if (v->kind() != fbc::ValueKind::Weight) continue;
      auto t = ProgramWeight(*v, weights);
      if (!t.ok()) return t.status();
      out_.graph.constants[map[i]] = std::move(t).value();
    }
    for (const auto* pop : *program->ops()) {
      auto op = OpFromProgram(*pop, weights, map);
      if (!op.ok()) return op.status();
      out_.graph.ops.push_back(std::move(op).value());
    }
    return Status::Ok();
  }

  // A graph run by a backend plugin: loaded through the plugin (device memory, modules, weights
  // shared per process), then one exec node with host tensors in and out.
  Status AddPluginGraph(const format::EpContextNode& ep, const std::string& backend,
                        const std::shared_ptr<const format::ContextBinary>& bin) {
    auto lib = plugin::GetBackend(backend);
    if (!lib.ok()) return lib.status().WithContext("EPContext node '" + ep.name + "'");
    const auto* graph = bin->FindGraph(ep.partition_name);
    auto state = std::make_shared<exec::PluginGraphState>();
    state->graph_name = ep.partition_name;
    state->library = *lib;
    auto specs = [&](const auto* descs, std::vector<exec::PluginTensorSpec>* to) -> Status {
      for (uint32_t i = 0; descs && i < descs->size(); ++i) {
        exec::PluginTensorSpec spec;
        spec.dtype = static_cast<DataType>(descs->Get(i)->dtype());
        if (const auto* d = descs->Get(i)->dims()) spec.dims.assign(d->begin(), d->end());
        for (int64_t x : spec.dims) {
          if (x < 0)
            return InvalidGraph("graph '" + ep.partition_name +
                                "' has a dynamic dimension; backend " + backend +
                                " needs static shapes");
        }
        to->push_back(std::move(spec));
      }
      return Status::Ok();
    };
    ORTC_RETURN_IF_ERROR(specs(graph->inputs(), &state->inputs));
    ORTC_RETURN_IF_ERROR(specs(graph->outputs(), &state->outputs));
    if (state->inputs.size() != ep.inputs.size() || state->outputs.size() != ep.outputs.size()) {
      return InvalidGraph("EPContext node '" + ep.name + "' has " +
                          std::to_string(ep.inputs.size()) + " inputs and " +
                          std::to_string(ep.outputs.size()) + " outputs but graph '" +
                          ep.partition_name + "' has " + std::to_string(state->inputs.size()) +
                          " and " + std::to_string(state->outputs.size()));
    }
    std::vector<OrtcBlob> weights, artefacts;
    if (const auto* slots = graph->weights()) {
      for (uint32_t slot : *slots) {
        const auto bytes = bin->WeightBytes(slot);
        weights.push_back({nullptr, slot, bytes.data(), bytes.size()});
      }
    }
    const auto* sections = bin->manifest().sections();
    for (uint32_t i = 0; sections && i < sections->size(); ++i) {
      const auto* sec = sections->Get(i);
      if (sec->kind() != fb::SectionKind::Artefact || !sec->name()) continue;
      const auto bytes = bin->SectionBytes(i);
      artefacts.push_back({sec->name()->c_str(), 0, bytes.data(), bytes.size()});
    }
    const auto program = bin->ProgramBytes(*graph);
    const std::string content_id(bin->content_id());
    // The session's options for this backend, plus profiling when the session profiles.
    std::vector<std::pair<std::string, std::string>> option_text;
    if (auto it = options_.provider_options.find(backend); it != options_.provider_options.end())
      option_text.assign(it->second.begin(), it->second.end());
    if (options_.enable_profiling) option_text.push_back({"enable_profiling", "1"});
    std::vector<OrtcKeyValue> plugin_options;
    for (const auto& [k, v] : option_text) plugin_options.push_back({k.c_str(), v.c_str()});
    OrtcGraphLoadInfo info{};
    info.struct_size = sizeof(info);
    info.graph_name = ep.partition_name.c_str();
    info.content_id = content_id.c_str();
    info.program = program.data();
    info.program_size = program.size();
    info.weights = weights.data();
    info.num_weights = static_cast<uint32_t>(weights.size());
    info.artefacts = artefacts.data();
    info.num_artefacts = static_cast<uint32_t>(artefacts.size());
    info.options = plugin_options.data();
    info.num_options = static_cast<uint32_t>(plugin_options.size());
    OrtcBackend* table = (*lib)->table();
    OrtcGraph* loaded = nullptr;
    ORTC_RETURN_IF_ERROR((*lib)->StatusOf(table->load_graph(table, &info, &loaded),
                                          "EPContext node '" + ep.name + "': loading graph '" +
                                              ep.partition_name + "' on " + backend));
    // The plugin may keep pointers into the mapped binary: it lives as long as the graph.
    state->graph = std::shared_ptr<OrtcGraph>(
        loaded, [table, bin, lib = *lib](OrtcGraph* g) { table->release_graph(g); });
    state->profiling = options_.enable_profiling;
    auto described = (*lib)->DescribeGraph(loaded);
    if (!described.ok()) return described.status().WithContext("EPContext node '" + ep.name + "'");
    out_.report.graphs.push_back({ep.name, backend, ep.partition_name, *described});
    exec::ExecOp op;
    op.name = ep.name;
    op.op_type = "PluginGraph";
    op.domain = "ortc." + backend;
    op.kernel = &exec::RunPluginGraph;
    for (const auto& i : ep.inputs) op.inputs.push_back(ValueFor(i));
    for (const auto& o : ep.outputs) op.outputs.push_back(ValueFor(o));
    op.state = std::move(state);
    out_.graph.ops.push_back(std::move(op));
    return Status::Ok();
  }

  const onnx::ModelProto& model_;
  bool plugin_device_detected_ = false;
  const fs::path* dir_;
  const SessionOptions& options_;
  bool gate_only_;
  DeviceDescription device_;
  std::map<std::string, int64_t> opsets_;
  std::map<std::string, std::shared_ptr<const format::ContextBinary>> bins_;
  std::map<std::string, std::string> bin_paths_;
  LoadedModel out_;
};

}  // namespace

Result<LoadedModel> LoadModel(const onnx::ModelProto& model, const fs::path* model_dir,
                              const SessionOptions& options, bool gate_only) {
  if (!model.has_graph()) return InvalidGraph("not an ONNX model: it has no graph");
  // Only plugin backends take run-time options; the plugin checks the keys when it loads a graph
  // (options of a backend the model does not use are not checked further).
  for (const auto& [backend, keys] : options.provider_options) {
    if (backend != "cuda")
      return InvalidArgument("no backend named '" + backend +
                             "' takes run-time options (backends with options: cuda)");
  }
  return Builder(model, model_dir, options, gate_only).Build();
}

}  // namespace ortc::loader
