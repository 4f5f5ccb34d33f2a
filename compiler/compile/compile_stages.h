// The stages of one compile, in the order compile_driver.cpp runs them and named as the phases of
// its report (kCompilePhases): prepare and hash (stage_prepare.cpp), load and partition
// (stage_load.cpp), compile (stage_compile.cpp), emit (stage_emit.cpp), publish
// (stage_publish.cpp). What they share is a CompileRun: the models, the backends, the report
// being filled and the phase clock. Private to compile/.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "bundle/context_binary_writer.h"
#include "bundle/temp_file.h"
#include "compile/compile_driver.h"
#include "compile/output_folders.h"
#include "format/compatibility_info.h"
#include "format/ep_context.h"
#include "graph/model.h"
#include "partition/partitioner.h"

namespace ortc::compile {

// Times consecutive phases: each Lap ends one and starts the next, so the phases cover the
// whole compile and add up to its total.
class PhaseClock {
 public:
  using Clock = std::chrono::steady_clock;
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

// One model of a compile (alone, or one of a weight-sharing group).
struct ModelJob {
  std::filesystem::path source, ctx_path;
  std::string stem;  // of the ctx model: the source's, plus "_<profile>" with shape profiles
  graph::InputShapes input_shapes;
  std::string prefix;
  std::unique_ptr<graph::Model> model;
  partition::Partition partition;
  std::vector<std::optional<format::EpContextNode>> ep_nodes;
  ModelSummary summary;
};

// One compile of one or more models into one set of files.
struct CompileRun {
  CompileRun(const CompileOptions& options, std::vector<std::filesystem::path> sources,
             std::vector<std::string> profile_names)
      : o(options),
        sources(std::move(sources)),
        profile_names(std::move(profile_names)),
        clock(&report.phases_ms) {}

  const CompileOptions& o;
  const std::vector<std::filesystem::path> sources;
  // Set when one model is compiled at several shape profiles (one job per profile).
  const std::vector<std::string> profile_names;
  bool group() const { return sources.size() > 1; }
  void Progress(const std::string& phase, int64_t done, int64_t total) const {
    if (o.progress) o.progress(phase, done, total);
  }
  // Said on stderr now and kept in the report (compile --json lists the warnings).
  void Warn(const std::string& why) {
    spdlog::warn("{}", why);
    report.warnings.push_back(why);
  }

  std::vector<const backends::Backend*> order;  // --ep, in priority order
  std::vector<ModelJob> jobs;
  std::filesystem::path first_ctx;             // the binaries are named after it
  std::string options_json;                    // recorded in each ctx model (compile/provenance.h)
  std::vector<std::filesystem::path> outputs;  // every file the compile publishes
  OutputFolders folders;
  CompileReport report;
  PhaseClock clock;
  // The finished binaries, as temporary files (an embedded binary is not published on its own).
  std::vector<std::unique_ptr<bundle::ContextBinaryWriter>> binaries;
  std::vector<format::BinaryFacts> binary_facts;  // for ONNX Runtime's compatibility string
  // The emitted ctx models (one per job) and external initializers, as temporary files.
  std::vector<std::unique_ptr<bundle::TempFile>> ctx_files;
  std::vector<int64_t> ctx_sizes;
  std::unique_ptr<bundle::TempFile> external;
  int64_t external_bytes = 0;
};

// A model file's name without ".onnx".
std::string Stem(const std::filesystem::path& p);
// In a group of several models, the --shape-profile that names this model (by its stem).
const CompileOptions::ShapeProfile* ProfileNamed(const CompileOptions& o, const std::string& stem);

// prepare: resolves --ep and checks the options, notes the warnings they deserve, and plans one
// job per model (ctx model path, node name prefix, input shapes) with its source's digest (hash).
Status PlanCompile(CompileRun& run);
// With --if-changed: true when every output is current. The report then lists the ctx models and
// the temporary files of killed compiles that were removed.
Result<bool> ReportIfUpToDate(CompileRun& run);
// load, partition: loads and partitions every model before anything is written, and checks that
// every --input-shape, --input-value and --shape-profile names an input.
Status LoadAndPartition(CompileRun& run);
// prepare: lists the outputs, refuses existing ones with --error-if-output-exists, makes the
// output folders and removes temporary files that killed compiles left in them.
Status PrepareOutputs(CompileRun& run);
// compile: every group of every model into its backend's binary (one per backend), each
// finished as a temporary file; then fails or warns when a named backend took nothing.
Status CompileBinaries(CompileRun& run);
// emit: each ctx model (and the external initializers) as temporary files.
Status EmitCtxModels(CompileRun& run);
// publish: the renames (binaries first, the ctx models last) under the folder's publish lock,
// the options' publish hooks, and a warning for another backend's binary left from an earlier
// compile.
Status Publish(CompileRun& run);

}  // namespace ortc::compile
