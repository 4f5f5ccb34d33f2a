// A compile's prepare and hash phases: the options checked, one job planned per model, the
// sources hashed, the --if-changed check, and the output folders made ready.
#include <set>

#include "compile/compile_stages.h"
#include "compile/provenance.h"
#include "registry.h"

namespace ortc::compile {
namespace {

namespace fs = std::filesystem;

Status ValidateOptions(const CompileOptions& o, std::vector<const backends::Backend*>* order) {
  for (const auto& name : o.backends) {
    auto found = backends::ResolveBackend(name);
    if (!found.ok())
      return InvalidArgument("unknown backend '" + name + "' in --ep (known: " +
                             backends::KnownBackendNames() + "); " + found.status().message());
    const auto* b = *found;
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

// The options that are valid alone but not for these sources, and those worth a warning.
Status CheckOptionsForSources(CompileRun& run) {
  const CompileOptions& o = run.o;
  // -o newout (no slash, no such folder) names the ctx model file itself: said, since a folder
  // was the likelier intent.
  if (std::error_code dir_ec; !o.output.empty() && !o.output.string().ends_with("/") &&
                              !fs::is_directory(o.output, dir_ec) &&
                              o.output.extension() != ".onnx") {
    run.Warn("-o " + o.output.string() +
             " is not a folder: the ctx model is written to that file name (end it with / "
             "for a folder, or name a .onnx file)");
  }
  for (const auto& [name, opts] : o.provider_options) {
    const std::string w = backends::FindBackend(name)->OptionsWarning(opts);
    if (!w.empty()) run.Warn(w);
  }
  if (run.group() && !o.external_initializers_file.empty()) {
    return InvalidArgument(
        "--external-initializers-file is not supported with --share-weights (one file would serve "
        "several models)");
  }
  if (!o.node_name_prefixes.empty() && o.node_name_prefixes.size() != run.sources.size()) {
    return InvalidArgument("give --node-name-prefix once per model (" +
                           std::to_string(run.sources.size()) + " models, " +
                           std::to_string(o.node_name_prefixes.size()) + " prefixes)");
  }
  return Status::Ok();
}

}  // namespace

const CompileOptions::ShapeProfile* ProfileNamed(const CompileOptions& o, const std::string& stem) {
  if (o.more_models.empty()) return nullptr;
  for (const auto& p : o.shape_profiles)
    if (p.name == stem) return &p;
  return nullptr;
}

std::string Stem(const fs::path& p) {
  std::string name = p.filename().string();
  if (name.size() > 5 && name.ends_with(".onnx")) name.resize(name.size() - 5);
  return name;
}

Status PlanCompile(CompileRun& run) {
  const CompileOptions& o = run.o;
  ORTC_RETURN_IF_ERROR(ValidateOptions(o, &run.order));
  ORTC_RETURN_IF_ERROR(CheckOptionsForSources(run));

  // Output paths: with a group, -o is a folder (default: the first model's folder).
  std::error_code ec;
  run.jobs.resize(run.sources.size());
  std::set<std::string> stems, prefixes;
  for (size_t i = 0; i < run.sources.size(); ++i) {
    ModelJob& job = run.jobs[i];
    job.source = run.sources[i];
    job.stem = Stem(run.sources[i]);
    job.input_shapes = o.input_shapes;
    if (!run.profile_names.empty()) {  // one model at the profiles' shapes
      const auto& profile = o.shape_profiles[i];
      job.stem += "_" + profile.name;
      for (const auto& [name, dims] : profile.shapes) job.input_shapes[name] = dims;
    } else if (const auto* profile = ProfileNamed(o, job.stem)) {  // this model's own shapes
      for (const auto& [name, dims] : profile->shapes) job.input_shapes[name] = dims;
    }
    if (run.group()) {
      if (!o.output.empty() && fs::exists(o.output, ec) && !fs::is_directory(o.output, ec)) {
        return InvalidArgument("with several models, -o must name a folder");
      }
      const fs::path dir = o.output.empty() ? run.sources[0].parent_path() : o.output;
      job.ctx_path = dir / (job.stem + "_ctx.onnx");
      if (!stems.insert(job.stem).second) {
        return InvalidArgument("two models of the group are named " + job.stem +
                               ": their ctx models would collide; rename one");
      }
    } else {
      CompileOptions single = o;
      single.model = run.sources[i];
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
    ORTC_RETURN_IF_ERROR(run.folders.Need(job.ctx_path.parent_path()));
    // Once per model: the staleness check, the ctx model and the bundle manifest all use it.
    run.clock.Lap("prepare");
    auto digest = SourceDigest(job.source, [&](const fs::path& file, int64_t done, int64_t total) {
      run.Progress("hash " + file.filename().string(), done, total);
    });
    run.clock.Lap("hash");
    if (!digest.ok()) return digest.status();
    job.summary.source = job.source;
    job.summary.ctx_model = job.ctx_path;
    job.summary.source_sha256 = *digest;
  }
  // Binaries are named after the first ctx model; with shape profiles, after the model itself
  // (llm_cuda.bin beside llm_prefill_ctx.onnx and llm_decode_ctx.onnx).
  run.first_ctx = run.profile_names.empty()
                      ? run.jobs[0].ctx_path
                      : run.jobs[0].ctx_path.parent_path() / (Stem(run.sources[0]) + "_ctx.onnx");
  run.options_json = CompileOptionsJson(o);
  return Status::Ok();
}

Result<bool> ReportIfUpToDate(CompileRun& run) {
  bool fresh = true;
  for (const auto& job : run.jobs) {
    auto why = StaleReason(job.ctx_path, job.source, job.summary.source_sha256, run.options_json,
                           run.o.compiler);
    if (!why.ok()) return why.status();
    fresh = fresh && why->empty();
  }
  run.clock.Lap("hash");
  if (!fresh) return false;
  CompileReport& report = run.report;
  report.up_to_date = true;
  // Nothing to write, but temporary files of killed compiles in these folders still go.
  std::set<fs::path> dirs;
  for (const auto& job : run.jobs) dirs.insert(job.ctx_path.parent_path());
  for (const auto& dir : dirs) {
    for (auto& removed : bundle::RemoveStaleTempFiles(dir))
      report.removed_temp_files.push_back(std::move(removed));
  }
  for (const auto& job : run.jobs) {
    std::error_code size_ec;
    report.files.push_back(
        {job.ctx_path, "ctx_model", static_cast<int64_t>(fs::file_size(job.ctx_path, size_ec))});
    report.models.push_back(job.summary);
  }
  run.clock.Lap("prepare");
  return true;
}

Status PrepareOutputs(CompileRun& run) {
  const CompileOptions& o = run.o;
  for (const auto& job : run.jobs) run.outputs.push_back(job.ctx_path);
  for (const auto* b : run.order)
    run.outputs.push_back(BinPath(run.first_ctx, std::string(b->name())));
  if (!o.external_initializers_file.empty())
    run.outputs.push_back(run.first_ctx.parent_path() / o.external_initializers_file);
  if (o.error_if_output_exists) {
    std::error_code ec;
    for (const auto& f : run.outputs) {
      if (fs::exists(f, ec))
        return InvalidArgument("output " + f.string() + " exists (--error-if-output-exists)");
    }
  }
  ORTC_RETURN_IF_ERROR(run.folders.Create());
  // Temporary files of earlier compiles that were killed (SIGKILL, a crash) go now.
  std::set<fs::path> output_dirs;
  for (const auto& f : run.outputs) output_dirs.insert(f.parent_path());
  for (const auto& dir : output_dirs) {
    for (auto& removed : bundle::RemoveStaleTempFiles(dir))
      run.report.removed_temp_files.push_back(std::move(removed));
  }
  run.clock.Lap("prepare");
  return Status::Ok();
}

}  // namespace ortc::compile
