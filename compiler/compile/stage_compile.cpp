// A compile's compile phase: each backend named in --ep compiles its groups of every model into
// one context binary (each distinct weight once), finished as a temporary file; the EPContext
// node of each group is filled in as it goes. Then a named accelerator that took nothing is a
// warning, or the error --error-if-no-nodes-compiled asks for.
#include <algorithm>

#include "compile/compile_stages.h"
#include "context_binary_format.h"
#include "registry.h"

namespace ortc::compile {
namespace {

constexpr const char* kProducer = "ortc " ORTC_VERSION_STRING;

bool Named(const CompileRun& run, const backends::Backend* b) {
  return std::find(run.order.begin(), run.order.end(), b) != run.order.end();
}

// What the backend took of every model, and why it turned the rest down.
BackendSummary Summarise(const CompileRun& run, const backends::Backend* b) {
  BackendSummary summary;
  summary.name = std::string(b->name());
  summary.compiled = Named(run, b);
  for (const auto& job : run.jobs) {
    for (const auto& grp : job.partition.groups) {
      if (grp.backend != b) continue;
      summary.groups++;
      summary.nodes += static_cast<int>(grp.nodes.size());
    }
  }
  std::vector<partition::RefusalGroup> refused;
  for (const auto& job : run.jobs)
    partition::AddRefusals(job.model->graph, job.partition, &refused);
  for (auto& r : refused)
    if (r.backend == summary.name) summary.refusals.push_back(std::move(r));
  return summary;
}

// The weight bytes the binaries will hold, for the progress display.
struct WeightProgress {
  int64_t done = 0, total = 0;
};

// Compiles one group of a model and adds its graph, weights and artefacts to the binary; fills
// the group's EPContext node (its content id is prepended once the binary is finished).
Status CompileGroupInto(CompileRun& run, const backends::Backend* b,
                        const backends::ProviderOptions& opts, const backends::BinaryIdentity& id,
                        const std::filesystem::path& bin_path, bundle::ContextBinaryWriter& writer,
                        ModelJob& job, size_t gi, bool main_context, WeightProgress& weights) {
  const graph::Model& model = *job.model;
  const auto& grp = job.partition.groups[gi];
  CompileReport& report = run.report;
  backends::Subgraph sg{job.prefix + grp.name(), grp.nodes, grp.inputs, grp.outputs};
  run.Progress("compile " + sg.name, weights.done, weights.total);
  // A backend's own steps (NVRTC, seconds per architecture) replace the byte count.
  auto compiled = b->Compile(model, sg, opts, [&](const std::string& step, int k, int n) {
    run.Progress("compile " + sg.name + ": " + step + " (" + std::to_string(k + 1) + "/" +
                     std::to_string(n) + ")",
                 0, 1);
  });
  if (!compiled.ok()) return compiled.status().WithContext("compiling " + sg.name);
  for (const auto& [k, v] : compiled->stats) report.lowering_stats[k] += v;
  for (auto& c : compiled->choices)
    report.choices.push_back({std::string(b->name()), sg.name, std::move(c)});
  for (auto& [name, bytes] : compiled->artefacts) {
    // 256 B: GPU copies and module loads read artefacts in place.
    writer.AddArtefact(name, std::move(bytes), 256);
  }
  for (const auto& [k, v] : compiled->binary_versions) writer.AddVersion(k, v);
  std::string graph_notes;
  for (const auto& [k, v] : compiled->notes) graph_notes += ";" + k + "=" + v;
  bundle::GraphSpec spec{
      sg.name, compiled->inputs,     compiled->outputs, std::move(compiled->program),
      {},      compiled->arena_bytes};
  for (const auto& w : compiled->weights) {
    const int64_t stored_before = writer.stats().weight_bytes_stored;
    auto index = writer.AddWeight(w);
    if (!index.ok()) return index.status().WithContext("writing weights of " + sg.name);
    spec.weights.push_back(*index);
    job.summary.weights++;
    job.summary.weight_bytes += w.bytes.size();
    job.summary.new_unique_bytes += writer.stats().weight_bytes_stored - stored_before;
    weights.done += w.bytes.size();
    run.Progress("write " + bin_path.filename().string(), weights.done, weights.total);
  }
  format::EpContextNode node;
  node.name = sg.name;
  for (int v : grp.inputs) node.inputs.push_back(model.graph.values[v].name);
  for (int v : grp.outputs) node.outputs.push_back(model.graph.values[v].name);
  node.main_context = main_context ? 1 : 0;
  node.embed_mode = run.o.embed_mode;
  node.ep_cache_context = run.o.embed_mode == 0 ? bin_path.filename().string() : "";
  node.ep_sdk_version = id.sdk_version;
  node.onnx_model_filename = job.source.filename().string();
  node.hardware_architecture = id.hardware_architecture;
  node.partition_name = sg.name;
  node.source = std::string(b->ep_source());
  node.max_size = static_cast<int64_t>(spec.arena_bytes);
  node.notes = graph_notes;
  job.ep_nodes[gi] = std::move(node);
  writer.AddGraph(std::move(spec));
  return Status::Ok();
}

// One backend's binary: every group it took of every model, then finished.
Status CompileBackendBinary(CompileRun& run, const backends::Backend* b, BackendSummary& summary,
                            WeightProgress& weights) {
  const CompileOptions& o = run.o;
  CompileReport& report = run.report;
  const auto options_it = o.provider_options.find(summary.name);
  const backends::ProviderOptions opts =
      options_it == o.provider_options.end() ? backends::ProviderOptions{} : options_it->second;
  auto identity = b->Identity(opts);
  if (!identity.ok()) return identity.status();
  const backends::BinaryIdentity& id = *identity;
  const std::filesystem::path bin_path = BinPath(run.first_ctx, summary.name);
  auto writer = bundle::ContextBinaryWriter::Create(
      bin_path, {kProducer, summary.name, id.versions, id.hardware_targets, id.properties});
  if (!writer.ok()) return writer.status();
  for (auto& job : run.jobs) {
    bool first = true;  // every ctx model has its own main context node for this binary
    for (size_t gi = 0; gi < job.partition.groups.size(); ++gi) {
      if (job.partition.groups[gi].backend != b) continue;
      ORTC_RETURN_IF_ERROR(
          CompileGroupInto(run, b, opts, id, bin_path, **writer, job, gi, first, weights));
      first = false;
    }
  }
  ORTC_RETURN_IF_ERROR((*writer)->Finish());
  const auto& written_info = (*writer)->info();
  run.binary_facts.push_back({summary.name, written_info.hardware_targets, written_info.versions});
  const auto& st = (*writer)->stats();
  summary.content_id = st.content_id;
  report.weights_added += st.weights_added;
  report.weights_stored += st.weights_stored;
  report.weight_bytes_added += st.weight_bytes_added;
  report.weight_bytes_stored += st.weight_bytes_stored;
  const std::string notes = "content_id=" + st.content_id +
                            ";format=" + std::to_string(format::kFormatMajor) + "." +
                            std::to_string(format::kFormatMinor);
  std::optional<std::string> payload;
  if (o.embed_mode == 1) {
    auto bytes = (*writer)->ReadFinished();
    if (!bytes.ok()) return bytes.status();
    payload = std::move(bytes).value();
  }
  for (auto& job : run.jobs) {
    for (size_t gi = 0; gi < job.partition.groups.size(); ++gi) {
      auto& ep = job.ep_nodes[gi];
      if (job.partition.groups[gi].backend != b || !ep) continue;
      ep->notes = notes + ep->notes;
      if (payload && ep->main_context == 1) ep->ep_cache_context = *payload;
    }
  }
  if (!payload) run.binaries.push_back(std::move(writer).value());
  return Status::Ok();
}

// Nothing compiled at all, or an accelerator named in --ep that took nothing: not a success to
// pass over in silence (a dynamic dimension left unfixed is the usual cause).
Status CheckSomethingCompiled(CompileRun& run) {
  const CompileOptions& o = run.o;
  bool any_compiled = false;
  for (const auto& job : run.jobs) {
    any_compiled = any_compiled || std::any_of(job.ep_nodes.begin(), job.ep_nodes.end(),
                                               [](const auto& n) { return n.has_value(); });
  }
  if (!any_compiled && o.error_if_no_nodes_compiled) {
    return NotImplemented(
        "no node was compiled (--error-if-no-nodes-compiled): the named backends took nothing");
  }
  for (const auto& summary : run.report.backends) {
    const auto* b = backends::FindBackend(summary.name);
    if (!summary.compiled || summary.groups > 0 || !b || b->is_fallback()) continue;
    std::string why = "backend " + summary.name + " compiled no node";
    for (size_t i = 0; i < summary.refusals.size() && i < 2; ++i)
      why += std::string(i ? "; " : ": ") + summary.refusals[i].reason + " (" +
             std::to_string(summary.refusals[i].nodes.size()) + " node(s))";
    if (o.error_if_no_nodes_compiled)
      return NotImplemented(why + " (--error-if-no-nodes-compiled)");
    run.Warn(why);
  }
  return Status::Ok();
}

}  // namespace

Status CompileBinaries(CompileRun& run) {
  WeightProgress weights;
  for (const auto& job : run.jobs) {
    for (const auto& grp : job.partition.groups) {
      if (Named(run, grp.backend)) weights.total += grp.initializer_bytes;
    }
  }
  for (const auto* b : run.jobs[0].partition.backends) {
    BackendSummary summary = Summarise(run, b);
    if (summary.compiled && summary.groups > 0)
      ORTC_RETURN_IF_ERROR(CompileBackendBinary(run, b, summary, weights));
    run.report.backends.push_back(std::move(summary));
  }
  run.clock.Lap("compile");
  return CheckSomethingCompiled(run);
}

}  // namespace ortc::compile
