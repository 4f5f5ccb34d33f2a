// The compile pipeline: one or more models through the stages of compile_stages.h (prepare,
// hash, load, partition, compile, emit, publish), and Compile, which decides whether several
// models form one weight-sharing group or are compiled one by one.
#include "compile/compile_driver.h"

#include <algorithm>
#include <set>

#include "compile/compile_stages.h"

namespace ortc::compile {

namespace fs = std::filesystem;

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

// One set of files from `sources`: one model, a weight-sharing group, or one model at several
// shape profiles (profile_names). Every file is written as a temporary file first and renamed
// at the end; on any error none of them is left behind.
Result<CompileReport> CompileGroup(const CompileOptions& o, const std::vector<fs::path>& sources,
                                   const std::vector<std::string>& profile_names) {
  CompileRun run(o, sources, profile_names);
  ORTC_RETURN_IF_ERROR(PlanCompile(run));
  if (o.if_changed) {
    auto up_to_date = ReportIfUpToDate(run);
    if (!up_to_date.ok()) return up_to_date.status();
    if (*up_to_date) {
      run.clock.Stop();
      return std::move(run.report);
    }
  }
  ORTC_RETURN_IF_ERROR(LoadAndPartition(run));
  ORTC_RETURN_IF_ERROR(PrepareOutputs(run));
  ORTC_RETURN_IF_ERROR(CompileBinaries(run));
  ORTC_RETURN_IF_ERROR(EmitCtxModels(run));
  ORTC_RETURN_IF_ERROR(Publish(run));
  run.clock.Stop();
  run.folders.Keep();
  return std::move(run.report);
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
