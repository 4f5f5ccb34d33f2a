// The compile pipeline: load -> partition -> compile per backend -> emit, then commit files.
#include "compile/compile_driver.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <set>
#include <string_view>
#include <unordered_set>

#include <spdlog/spdlog.h>

#include "bundle/context_binary_writer.h"
#include "compile/output_folders.h"
#include "compile/provenance.h"
#include "compile/publish_lock.h"
#include "context_binary_format.h"
#include "emit/ctx_model_writer.h"
#include "format/ep_context.h"
#include "format/temp_registry.h"
#include "graph/model.h"
#include "loader/compatibility_info.h"
#include "partition/partitioner.h"
#include "registry.h"

namespace ortc::compile {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kProducer = "ortc " ORTC_VERSION_STRING;

// Times consecutive phases: each Lap ends one and starts the next, so the phases cover the
// whole compile and add up to its total.
class PhaseClock {
 public:
  explicit PhaseClock(std::map<std::string, double>* ms) : ms_(ms), start_(Clock::now()) {
    lap_ = start_;
    for (const char* phase : kCompilePhases) (*ms_)[phase] += 0;
  }
  void Lap(const char* phase) {
    const auto now = Clock::now();
    (*ms_)[phase] += Ms(now - lap_);
    lap_ = now;
  }
  void Stop() { (*ms_)["total"] += Ms(lap_ - start_); }

 private:
  static double Ms(Clock::duration d) {
    return std::chrono::duration<double, std::milli>(d).count();
  }
  std::map<std::string, double>* ms_;
  Clock::time_point start_, lap_;
};

std::string Stem(const fs::path& p) {
  std::string name = p.filename().string();
  if (name.size() > 5 && name.ends_with(".onnx")) name.resize(name.size() - 5);
  return name;
}

// In a group of several models, the --shape-profile that names this model (by its stem).
const CompileOptions::ShapeProfile* ProfileNamed(const CompileOptions& o, const std::string& stem) {
  if (o.more_models.empty()) return nullptr;
  for (const auto& p : o.shape_profiles)
    if (p.name == stem) return &p;
  return nullptr;
}

bool HasEpContextNodes(const graph::Model& m) {
  for (const auto& n : m.proto.graph().node()) {
    if (format::IsEpContextNode(n)) return true;
  }
  return false;
}

std::span<const std::byte> AsBytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

}  // namespace

fs::path CtxModelPath(const CompileOptions& o) {
  const std::string file = Stem(o.model) + "_ctx.onnx";
  if (o.output.empty()) return o.model.parent_path() / file;
  std::error_code ec;
  if (fs::is_directory(o.output, ec) || o.output.string().ends_with("/")) return o.output / file;
  return o.output;
}

fs::path BinPath(const fs::path& ctx_model, const std::string& backend) {
  std::string base = ctx_model.filename().string();
  if (base.ends_with("_ctx.onnx")) {
    base.resize(base.size() - 9);
  } else if (base.ends_with(".onnx")) {
    base.resize(base.size() - 5);
  }
  return ctx_model.parent_path() / (base + "_" + backend + ".bin");
}

namespace {

// One model of a compile (alone, or one of a weight-sharing group).
struct ModelJob {
  fs::path source, ctx_path;
  std::string stem;  // of the ctx model: the source's, plus "_<profile>" with shape profiles
  graph::InputShapes input_shapes;
  std::string prefix;
  std::unique_ptr<graph::Model> model;
  partition::Partition partition;
  std::vector<std::optional<format::EpContextNode>> ep_nodes;
  ModelSummary summary;
};

Status ValidateOptions(const CompileOptions& o, std::vector<const backends::Backend*>* order) {
  for (const auto& name : o.backends) {
    const auto* b = backends::FindBackend(name);
    if (!b)
      return InvalidArgument("unknown backend '" + name +
                             "' in --ep (known: " + backends::KnownBackendNames() + ")");
    if (!b->can_compile()) {
      return NotImplemented("backend " + name + " cannot compile yet (" +
                            std::string(b->status_line()) + ")");
    }
    order->push_back(b);
  }
  for (const auto& [name, opts] : o.provider_options) {
    const auto* b = backends::FindBackend(name);
    if (!b)
      return InvalidArgument("--provider-option names unknown backend '" + name +
                             "' (known: " + backends::KnownBackendNames() + ")");
    ORTC_RETURN_IF_ERROR(b->ValidateOptions(opts));
  }
  if (o.embed_mode != 0 && o.embed_mode != 1) return InvalidArgument("--embed-mode must be 0 or 1");
  if (!o.external_initializers_file.empty() &&
      fs::path(o.external_initializers_file).filename() != fs::path(o.external_initializers_file)) {
    return InvalidArgument(
        "--external-initializers-file takes a file name (it is written beside the ctx model), not "
        "a path");
  }
  return Status::Ok();
}

// Loads, checks and partitions one model.
Status PrepareJob(const CompileOptions& o, const std::vector<const backends::Backend*>& order,
                  bool group, ModelJob* job, PhaseClock* clock) {
  graph::LoadOptions load;
  load.input_shapes = job->input_shapes;
  load.input_values = o.input_values;
  load.input_shapes_of_group = group;
  load.fold_shapes = true;
  auto loaded = graph::LoadModelFromFile(job->source, load);
  if (!loaded.ok()) return loaded.status();
  job->model = std::move(loaded).value();
  if (HasEpContextNodes(*job->model)) {
    return InvalidArgument(job->model->display_name +
                           " already contains EPContext nodes (it is a compiled model); compile "
                           "the source model instead");
  }
  clock->Lap("load");
  job->partition = partition::PartitionGraph(job->model->graph, order);
  ORTC_RETURN_IF_ERROR(
      partition::CheckPartition(job->model->graph, job->partition, o.max_partitions));
  clock->Lap("partition");
  job->ep_nodes.assign(job->partition.groups.size(), std::nullopt);
  return Status::Ok();
}

Result<CompileReport> CompileGroup(const CompileOptions& o, const std::vector<fs::path>& sources,
                                   const std::vector<std::string>& profile_names) {
  CompileReport report;
  PhaseClock clock(&report.phases_ms);
  auto progress = [&](const std::string& phase, int64_t done, int64_t total) {
    if (o.progress) o.progress(phase, done, total);
  };
  std::vector<const backends::Backend*> order;
  ORTC_RETURN_IF_ERROR(ValidateOptions(o, &order));
  // -o newout (no slash, no such folder) names the ctx model file itself: said, since a folder
  // was the likelier intent.
  if (std::error_code dir_ec; !o.output.empty() && !o.output.string().ends_with("/") &&
                              !fs::is_directory(o.output, dir_ec) &&
                              o.output.extension() != ".onnx") {
    const std::string w = "-o " + o.output.string() +
                          " is not a folder: the ctx model is written to that file name (end it "
                          "with / for a folder, or name a .onnx file)";
    spdlog::warn("{}", w);
    report.warnings.push_back(w);
  }
  for (const auto& [name, opts] : o.provider_options) {
    const std::string w = backends::FindBackend(name)->OptionsWarning(opts);
    if (w.empty()) continue;
    spdlog::warn("{}", w);
    report.warnings.push_back(w);
  }
  const bool group = sources.size() > 1;
  if (group && !o.external_initializers_file.empty()) {
    return InvalidArgument(
        "--external-initializers-file is not supported with --share-weights (one file would serve "
        "several models)");
  }
  if (!o.node_name_prefixes.empty() && o.node_name_prefixes.size() != sources.size()) {
    return InvalidArgument("give --node-name-prefix once per model (" +
                           std::to_string(sources.size()) + " models, " +
                           std::to_string(o.node_name_prefixes.size()) + " prefixes)");
  }

  // Output paths: with a group, -o is a folder (default: the first model's folder).
  std::error_code ec;
  OutputFolders folders;
  std::vector<ModelJob> jobs(sources.size());
  std::set<std::string> stems, prefixes;
  for (size_t i = 0; i < sources.size(); ++i) {
    ModelJob& job = jobs[i];
    job.source = sources[i];
    job.stem = Stem(sources[i]);
    job.input_shapes = o.input_shapes;
    if (!profile_names.empty()) {  // one model at the profiles' shapes
      const auto& profile = o.shape_profiles[i];
      job.stem += "_" + profile.name;
      for (const auto& [name, dims] : profile.shapes) job.input_shapes[name] = dims;
    } else if (const auto* profile = ProfileNamed(o, job.stem)) {  // this model's own shapes
      for (const auto& [name, dims] : profile->shapes) job.input_shapes[name] = dims;
    }
    if (group) {
      if (!o.output.empty() && fs::exists(o.output, ec) && !fs::is_directory(o.output, ec)) {
        return InvalidArgument("with several models, -o must name a folder");
      }
      const fs::path dir = o.output.empty() ? sources[0].parent_path() : o.output;
      job.ctx_path = dir / (job.stem + "_ctx.onnx");
      if (!stems.insert(job.stem).second) {
        return InvalidArgument("two models of the group are named " + job.stem +
                               ": their ctx models would collide; rename one");
      }
    } else {
      CompileOptions single = o;
      single.model = sources[i];
      job.ctx_path = CtxModelPath(single);
    }
    job.prefix = o.node_name_prefixes.empty() ? job.stem + "_" : o.node_name_prefixes[i];
    if (!prefixes.insert(job.prefix).second) {
      return InvalidArgument("node name prefix '" + job.prefix +
                             "' is used twice: graph names must be unique in a group");
    }
    if (fs::weakly_canonical(job.ctx_path) == fs::weakly_canonical(job.source)) {
      return InvalidArgument("the output " + job.ctx_path.string() +
                             " would overwrite the source model");
    }
    ORTC_RETURN_IF_ERROR(folders.Need(job.ctx_path.parent_path()));
    // Once per model: the staleness check, the ctx model and the bundle manifest all use it.
    clock.Lap("prepare");
    auto digest = SourceDigest(job.source, [&](const fs::path& file, int64_t done, int64_t total) {
      progress("hash " + file.filename().string(), done, total);
    });
    clock.Lap("hash");
    if (!digest.ok()) return digest.status();
    job.summary.source = job.source;
    job.summary.ctx_model = job.ctx_path;
    job.summary.source_sha256 = *digest;
  }
  // Binaries are named after the first ctx model; with shape profiles, after the model itself
  // (llm_cuda.bin beside llm_prefill_ctx.onnx and llm_decode_ctx.onnx).
  const fs::path first_ctx =
      profile_names.empty() ? jobs[0].ctx_path
                            : jobs[0].ctx_path.parent_path() / (Stem(sources[0]) + "_ctx.onnx");
  const std::string options_json = CompileOptionsJson(o);
  if (o.if_changed) {
    bool fresh = true;
    for (const auto& job : jobs) {
      auto why = StaleReason(job.ctx_path, job.source, job.summary.source_sha256, options_json,
                             o.compiler);
      if (!why.ok()) return why.status();
      fresh = fresh && why->empty();
    }
    clock.Lap("hash");
    if (fresh) {
      report.up_to_date = true;
      // Nothing to write, but temporary files of killed compiles in these folders still go.
      std::set<fs::path> dirs;
      for (const auto& job : jobs) dirs.insert(job.ctx_path.parent_path());
      for (const auto& dir : dirs) {
        for (auto& removed : bundle::RemoveStaleTempFiles(dir))
          report.removed_temp_files.push_back(std::move(removed));
      }
      for (const auto& job : jobs) {
        std::error_code size_ec;
        report.files.push_back({job.ctx_path, "ctx_model",
                                static_cast<int64_t>(fs::file_size(job.ctx_path, size_ec))});
        report.models.push_back(job.summary);
      }
      clock.Lap("prepare");
      clock.Stop();
      return report;
    }
  }

  // Load and partition every model before writing anything.
  progress("load", 0, 1);
  for (auto& job : jobs) ORTC_RETURN_IF_ERROR(PrepareJob(o, order, group, &job, &clock));
  // In a group each --input-shape applies to the models that have that input; one that no
  // model has is a typo. A profile's shapes name inputs of its model.
  for (size_t i = 0; i < jobs.size(); ++i) {
    const auto* profile =
        profile_names.empty() ? ProfileNamed(o, jobs[i].stem) : &o.shape_profiles[i];
    for (const auto& [name, dims] : profile ? profile->shapes : graph::InputShapes{})
      if (!jobs[i].model->applied_input_shapes.count(name))
        return InvalidArgument("--shape-profile " + profile->name + " names '" + name +
                               "', which the model has no input of");
  }
  for (const auto& [name, dims] : o.input_shapes) {
    bool used = false;
    for (const auto& job : jobs) used = used || job.model->applied_input_shapes.count(name);
    if (group && !used)
      return InvalidArgument("--input-shape names '" + name + "', which no model of the group has");
  }
  for (const auto& [name, value] : o.input_values) {
    bool used = false;
    for (const auto& job : jobs) used = used || job.model->applied_input_values.count(name);
    if (group && !used)
      return InvalidArgument("--input-value names '" + name + "', which no model of the group has");
  }

  std::vector<fs::path> outputs;
  for (const auto& job : jobs) outputs.push_back(job.ctx_path);
  for (const auto* b : order) outputs.push_back(BinPath(first_ctx, std::string(b->name())));
  if (!o.external_initializers_file.empty())
    outputs.push_back(first_ctx.parent_path() / o.external_initializers_file);
  if (o.error_if_output_exists) {
    for (const auto& f : outputs) {
      if (fs::exists(f, ec))
        return InvalidArgument("output " + f.string() + " exists (--error-if-output-exists)");
    }
  }

  // Compile every group of every model into its backend's binary (one per backend).
  ORTC_RETURN_IF_ERROR(folders.Create());
  // Temporary files of earlier compiles that were killed (SIGKILL, a crash) go now.
  std::set<fs::path> output_dirs;
  for (const auto& f : outputs) output_dirs.insert(f.parent_path());
  for (const auto& dir : output_dirs) {
    for (auto& removed : bundle::RemoveStaleTempFiles(dir))
      report.removed_temp_files.push_back(std::move(removed));
  }
  clock.Lap("prepare");
  int64_t total_weight_bytes = 0, done_weight_bytes = 0;
  for (const auto& job : jobs) {
    for (const auto& grp : job.partition.groups) {
      if (std::find(order.begin(), order.end(), grp.backend) != order.end())
        total_weight_bytes += grp.initializer_bytes;
    }
  }
  std::vector<std::unique_ptr<bundle::ContextBinaryWriter>> writers;
  std::vector<loader::BinaryFacts> binary_facts;  // for ONNX Runtime's compatibility string
  for (const auto* b : jobs[0].partition.backends) {
    BackendSummary summary;
    summary.name = std::string(b->name());
    summary.compiled = std::find(order.begin(), order.end(), b) != order.end();
    for (const auto& job : jobs) {
      for (const auto& grp : job.partition.groups) {
        if (grp.backend != b) continue;
        summary.groups++;
        summary.nodes += static_cast<int>(grp.nodes.size());
      }
    }
    std::vector<partition::RefusalGroup> refused;
    for (const auto& job : jobs) partition::AddRefusals(job.model->graph, job.partition, &refused);
    for (auto& r : refused)
      if (r.backend == summary.name) summary.refusals.push_back(std::move(r));
    if (!summary.compiled || summary.groups == 0) {
      report.backends.push_back(summary);
      continue;
    }
    const auto options_it = o.provider_options.find(summary.name);
    const backends::ProviderOptions opts =
        options_it == o.provider_options.end() ? backends::ProviderOptions{} : options_it->second;
    const backends::BinaryIdentity id = b->Identity(opts);
    const fs::path bin_path = BinPath(first_ctx, summary.name);
    auto writer = bundle::ContextBinaryWriter::Create(
        bin_path, {kProducer, summary.name, id.versions, id.hardware_targets, id.properties});
    if (!writer.ok()) return writer.status();
    for (auto& job : jobs) {
      const graph::Model& model = *job.model;
      bool first = true;  // every ctx model has its own main context node for this binary
      for (size_t gi = 0; gi < job.partition.groups.size(); ++gi) {
        const auto& grp = job.partition.groups[gi];
        if (grp.backend != b) continue;
        backends::Subgraph sg{job.prefix + grp.name(), grp.nodes, grp.inputs, grp.outputs};
        progress("compile " + sg.name, done_weight_bytes, total_weight_bytes);
        // A backend's own steps (NVRTC, seconds per architecture) replace the byte count.
        auto compiled = b->Compile(model, sg, opts, [&](const std::string& step, int k, int n) {
          progress("compile " + sg.name + ": " + step + " (" + std::to_string(k + 1) + "/" +
                       std::to_string(n) + ")",
                   0, 1);
        });
        if (!compiled.ok()) return compiled.status().WithContext("compiling " + sg.name);
        for (const auto& [k, v] : compiled->stats) report.lowering_stats[k] += v;
        for (auto& c : compiled->choices)
          report.choices.push_back({summary.name, sg.name, std::move(c)});
        for (auto& [name, bytes] : compiled->artefacts) {
          // 256 B: GPU copies and module loads read artefacts in place.
          (*writer)->AddArtefact(name, std::move(bytes), 256);
        }
        for (const auto& [k, v] : compiled->binary_versions) (*writer)->AddVersion(k, v);
        std::string graph_notes;
        for (const auto& [k, v] : compiled->notes) graph_notes += ";" + k + "=" + v;
        bundle::GraphSpec spec{
            sg.name, compiled->inputs,     compiled->outputs, std::move(compiled->program),
            {},      compiled->arena_bytes};
        for (const auto& w : compiled->weights) {
          const int64_t stored_before = (*writer)->stats().weight_bytes_stored;
          auto index = (*writer)->AddWeight(w);
          if (!index.ok()) return index.status().WithContext("writing weights of " + sg.name);
          spec.weights.push_back(*index);
          job.summary.weights++;
          job.summary.weight_bytes += w.bytes.size();
          job.summary.new_unique_bytes += (*writer)->stats().weight_bytes_stored - stored_before;
          done_weight_bytes += w.bytes.size();
          progress("write " + bin_path.filename().string(), done_weight_bytes, total_weight_bytes);
        }
        format::EpContextNode node;
        node.name = sg.name;
        for (int v : grp.inputs) node.inputs.push_back(model.graph.values[v].name);
        for (int v : grp.outputs) node.outputs.push_back(model.graph.values[v].name);
        node.main_context = first ? 1 : 0;
        node.embed_mode = o.embed_mode;
        node.ep_cache_context = o.embed_mode == 0 ? bin_path.filename().string() : "";
        node.ep_sdk_version = id.sdk_version;
        node.onnx_model_filename = job.source.filename().string();
        node.hardware_architecture = id.hardware_architecture;
        node.partition_name = sg.name;
        node.source = std::string(b->ep_source());
        node.max_size = static_cast<int64_t>(spec.arena_bytes);
        node.notes = graph_notes;  // the binary's content id is prepended once it is known
        job.ep_nodes[gi] = std::move(node);
        (*writer)->AddGraph(std::move(spec));
        first = false;
      }
    }
    ORTC_RETURN_IF_ERROR((*writer)->Finish());
    const auto& written_info = (*writer)->info();
    binary_facts.push_back({summary.name, written_info.hardware_targets, written_info.versions});
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
    for (auto& job : jobs) {
      for (size_t gi = 0; gi < job.partition.groups.size(); ++gi) {
        auto& ep = job.ep_nodes[gi];
        if (job.partition.groups[gi].backend != b || !ep) continue;
        ep->notes = notes + ep->notes;
        if (payload && ep->main_context == 1) ep->ep_cache_context = *payload;
      }
    }
    if (!payload) writers.push_back(std::move(writer).value());
    report.backends.push_back(summary);
  }
  clock.Lap("compile");
  bool any_compiled = false;
  for (const auto& job : jobs) {
    any_compiled = any_compiled || std::any_of(job.ep_nodes.begin(), job.ep_nodes.end(),
                                               [](const auto& n) { return n.has_value(); });
  }
  if (!any_compiled && o.error_if_no_nodes_compiled) {
    return NotImplemented(
        "no node was compiled (--error-if-no-nodes-compiled): the named backends took nothing");
  }
  // An accelerator named in --ep that took nothing is not a success to pass over in silence
  // (a dynamic dimension left unfixed is the usual cause): a warning, or the error asked for.
  for (const auto& summary : report.backends) {
    const auto* b = backends::FindBackend(summary.name);
    if (!summary.compiled || summary.groups > 0 || !b || b->is_fallback()) continue;
    std::string why = "backend " + summary.name + " compiled no node";
    for (size_t i = 0; i < summary.refusals.size() && i < 2; ++i)
      why += std::string(i ? "; " : ": ") + summary.refusals[i].reason + " (" +
             std::to_string(summary.refusals[i].nodes.size()) + " node(s))";
    if (o.error_if_no_nodes_compiled)
      return NotImplemented(why + " (--error-if-no-nodes-compiled)");
    spdlog::warn("{}", why);
    report.warnings.push_back(why);
  }

  // Emit each ctx model (and the external initializers) as temporary files.
  progress("emit", 0, 1);
  std::vector<std::unique_ptr<bundle::TempFile>> ctx_files;
  std::vector<int64_t> ctx_sizes;
  std::unique_ptr<bundle::TempFile> external;
  int64_t external_bytes = 0;
  // Every model of a group uses the same binaries: one string for all.
  const std::string compatibility =
      binary_facts.empty() ? "" : loader::CompatibilityInfo(binary_facts);
  for (auto& job : jobs) {
    auto ctx = emit::BuildCtxModel({job.model.get(),
                                    &job.partition,
                                    job.ep_nodes,
                                    o.external_initializers_file,
                                    compatibility,
                                    {{kSourceDigestKey, job.summary.source_sha256},
                                     {kCompileOptionsKey, options_json},
                                     {kCompilerKey, o.compiler}}});
    if (!ctx.ok()) return ctx.status();
    // The names of the nodes left as ONNX nodes, gathered once: comparing every EPContext node
    // with every node was quadratic (100k single-node groups: 10^10 string compares).
    std::unordered_set<std::string_view> kept_names;
    for (const auto& n : ctx->proto.graph().node()) {
      if (!format::IsEpContextNode(n)) kept_names.insert(n.name());
    }
    for (const auto& ep : job.ep_nodes) {
      if (ep && kept_names.count(ep->name)) {
        return InvalidArgument(
            "EPContext node name '" + ep->name +
            "' clashes with a node of the model; choose another --node-name-prefix");
      }
    }
    const size_t ctx_size = ctx->proto.ByteSizeLong();
    if (ctx_size >= static_cast<size_t>(INT_MAX)) {
      return InvalidArgument(
          "the ctx model would be " + std::to_string(ctx_size) +
          " bytes, past ONNX's 2 GB limit: " +
          (o.embed_mode == 1 ? "use --embed-mode 0" : "use --external-initializers-file"));
    }
    if (!o.external_initializers_file.empty()) {
      auto f = bundle::TempFile::Create(job.ctx_path.parent_path() / o.external_initializers_file);
      if (!f.ok()) return f.status();
      external = std::move(f).value();
      for (const auto& chunk : ctx->external_chunks) {
        int64_t at = chunk.offset;
        ORTC_RETURN_IF_ERROR(chunk.bytes.ForEachChunk([&](std::span<const std::byte> c) {
          Status s = external->WriteAt(static_cast<uint64_t>(at), c);
          at += static_cast<int64_t>(c.size());
          return s;
        }));
      }
      ORTC_RETURN_IF_ERROR(external->Truncate(static_cast<uint64_t>(ctx->external_bytes)));
      external_bytes = ctx->external_bytes;
    }
    auto ctx_file = bundle::TempFile::Create(job.ctx_path);
    if (!ctx_file.ok()) return ctx_file.status();
    const std::string serialized = ctx->proto.SerializeAsString();
    ORTC_RETURN_IF_ERROR((*ctx_file)->Write(AsBytes(serialized)));
    ctx_files.push_back(std::move(ctx_file).value());
    ctx_sizes.push_back(static_cast<int64_t>(serialized.size()));
  }

  clock.Lap("emit");
  // Binaries first, the ctx models last: a ctx model never points at a bin not yet in place,
  // and a ctx model beside a newer bin (killed between the two) fails its content-id check.
  // With --error-if-output-exists each rename refuses to replace, atomically: of concurrent
  // compiles into one place exactly one publishes, and a loser removes what it had published.
  const auto mode = o.error_if_output_exists ? bundle::TempFile::Mode::kNoReplace
                                             : bundle::TempFile::Mode::kReplace;
  std::vector<fs::path> published;
  // Every file of this compile lands while no other compile publishes into the folder.
  const PublishLock lock(first_ctx.parent_path());
  // Ctrl-C, SIGTERM or SIGHUP from here on waits for the last rename (the process then dies of
  // it): a signal between the renames would leave a binary without its ctx model, or beside an
  // older one.
  const format::TerminationSignalsHeld held;
  if (o.before_publish) ORTC_RETURN_IF_ERROR(o.before_publish());
  auto publish = [&](bundle::TempFile& f) -> Status {
    Status s = f.Commit(mode);
    if (s.ok()) {
      published.push_back(f.final_path());
    } else if (mode == bundle::TempFile::Mode::kNoReplace) {
      for (const auto& p : published) fs::remove(p, ec);  // they did not exist before
      s = InvalidArgument(s.message() + "; nothing written (--error-if-output-exists)");
    }
    return s;
  };
  for (auto& w : writers) {
    ORTC_RETURN_IF_ERROR(publish(w->file()));
    report.files.push_back({w->final_path(), "context_binary", w->stats().file_bytes});
  }
  if (external) {
    ORTC_RETURN_IF_ERROR(publish(*external));
    report.files.push_back({external->final_path(), "external_initializers", external_bytes});
  }
  for (size_t i = 0; i < jobs.size(); ++i) {
    ORTC_RETURN_IF_ERROR(publish(*ctx_files[i]));
    report.files.push_back({jobs[i].ctx_path, "ctx_model", ctx_sizes[i]});
    report.models.push_back(jobs[i].summary);
  }
  if (o.after_publish) ORTC_RETURN_IF_ERROR(o.after_publish(report));
  // A binary of another backend under this model's name is from an earlier compile (a CUDA
  // bundle recompiled for the CPU alone): the new ctx models do not use it. Said, not removed:
  // it may be what the user still ships.
  for (const auto* b : backends::AllBackends()) {
    const fs::path other = BinPath(first_ctx, std::string(b->name()));
    const bool written = std::any_of(published.begin(), published.end(),
                                     [&](const fs::path& p) { return p == other; });
    if (written || !fs::exists(other, ec)) continue;
    const std::string why = other.string() + " is left from an earlier compile: the new ctx model" +
                            (jobs.size() > 1 ? "s do" : " does") +
                            " not use it (remove it, or name " + std::string(b->name()) +
                            " in --ep to compile it anew)";
    spdlog::warn("{}", why);
    report.warnings.push_back(why);
  }
  clock.Lap("publish");
  clock.Stop();
  folders.Keep();
  return report;
}

}  // namespace

Result<CompileReport> Compile(const CompileOptions& o) {
  std::vector<fs::path> sources = {o.model};
  sources.insert(sources.end(), o.more_models.begin(), o.more_models.end());
  if (!o.shape_profiles.empty() && sources.size() > 1) {
    // A group of several models: each profile is one model's own shapes (its file name
    // without .onnx), for models whose inputs share names at different shapes (an LLM's prefill
    // and decode graphs).
    if (!o.share_weights)
      return InvalidArgument(
          "--shape-profile with several models needs --share-weights (each profile then names a "
          "model of the group)");
    std::set<std::string> stems, named;
    for (const auto& src : sources) stems.insert(Stem(src));
    for (const auto& p : o.shape_profiles) {
      if (!named.insert(p.name).second)
        return InvalidArgument("--shape-profile " + p.name + " is given twice");
      if (!stems.count(p.name)) {
        std::string list;
        for (const auto& stem : stems) list += (list.empty() ? "" : ", ") + stem;
        return InvalidArgument("--shape-profile " + p.name +
                               ": with several models, a profile names a model of the group by "
                               "its file name without .onnx (" +
                               list + ")");
      }
    }
    return CompileGroup(o, sources, {});
  }
  if (!o.shape_profiles.empty()) {
    if (o.shape_profiles.size() < 2)
      return InvalidArgument("give at least two --shape-profile (e.g. prefill and decode)");
    std::vector<std::string> names;
    for (const auto& p : o.shape_profiles) {
      if (std::find(names.begin(), names.end(), p.name) != names.end())
        return InvalidArgument("--shape-profile " + p.name + " is given twice");
      names.push_back(p.name);
    }
    return CompileGroup(o, std::vector<fs::path>(o.shape_profiles.size(), o.model), names);
  }
  if (o.share_weights || sources.size() == 1) return CompileGroup(o, sources, {});
  // Several models without sharing: each compiled on its own, reports merged.
  std::error_code ec;
  if (!o.output.empty() && fs::exists(o.output, ec) && !fs::is_directory(o.output, ec))
    return InvalidArgument("with several models, -o must name a folder");
  CompileReport all;
  all.up_to_date = true;
  for (const auto& src : sources) {
    CompileOptions one = o;
    one.model = src;
    one.more_models.clear();
    if (!o.output.empty()) one.output = o.output / "";  // a folder, made when missing
    if (!o.node_name_prefixes.empty()) {
      if (o.node_name_prefixes.size() != sources.size())
        return InvalidArgument("give --node-name-prefix once per model");
      one.node_name_prefixes = {o.node_name_prefixes[&src - &sources[0]]};
    }
    if (o.after_publish) {  // what it describes is every model published so far
      one.after_publish = [&](const CompileReport& published) {
        CompileReport so_far = all;
        so_far.files.insert(so_far.files.end(), published.files.begin(), published.files.end());
        so_far.models.insert(so_far.models.end(), published.models.begin(), published.models.end());
        return o.after_publish(so_far);
      };
    }
    auto r = CompileGroup(one, {src}, {});
    if (!r.ok()) return r.status().WithContext(src.string());
    all.up_to_date = all.up_to_date && r->up_to_date;
    all.files.insert(all.files.end(), r->files.begin(), r->files.end());
    all.removed_temp_files.insert(all.removed_temp_files.end(), r->removed_temp_files.begin(),
                                  r->removed_temp_files.end());
    all.models.insert(all.models.end(), r->models.begin(), r->models.end());
    all.backends.insert(all.backends.end(), r->backends.begin(), r->backends.end());
    all.weights_added += r->weights_added;
    all.weights_stored += r->weights_stored;
    all.weight_bytes_added += r->weight_bytes_added;
    all.weight_bytes_stored += r->weight_bytes_stored;
    for (const auto& [k, v] : r->lowering_stats) all.lowering_stats[k] += v;
    for (const auto& [k, v] : r->phases_ms) all.phases_ms[k] += v;
    all.choices.insert(all.choices.end(), r->choices.begin(), r->choices.end());
    for (const auto& w : r->warnings) {
      if (std::find(all.warnings.begin(), all.warnings.end(), w) == all.warnings.end())
        all.warnings.push_back(w);
    }
  }
  return all;
}

}  // namespace ortc::compile
