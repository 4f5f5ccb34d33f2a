// `ortc compile` as a library call: load, partition, compile each group of each named backend
// into that backend's context binary, and emit the EPContext model. All files are written
// atomically and together: on any error none of them is left behind.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "backend.h"
#include "graph/input_shapes.h"
#include "ortc/status.h"
#include "partition/partition_report.h"

namespace ortc::compile {

struct CompileReport;

struct CompileOptions {
  std::filesystem::path model;
  // Further models. With share_weights they form a weight-sharing group: one ctx model each and
  // one binary per backend, named after the first model, holding every graph and each distinct
  // weight once. Without it, each model is compiled on its own.
  std::vector<std::filesystem::path> more_models;
  bool share_weights = false;
  std::vector<std::string> backends = {"cpu"};  // --ep, in priority order
  std::filesystem::path output;                 // ctx model path or folder; empty: beside the model
  int embed_mode = 0;
  // EPContext node/graph name prefix per model (one, or one per model); default "<model stem>_".
  std::vector<std::string> node_name_prefixes;
  std::string external_initializers_file;  // a file name in the output folder
  bool error_if_no_nodes_compiled = false;
  bool error_if_output_exists = false;
  std::map<std::string, backends::ProviderOptions> provider_options;  // backend -> options
  int max_partitions = 0;
  // --input-shape: fixed shapes for graph inputs, applied to every model before shape inference.
  graph::InputShapes input_shapes;
  // --shape-profile: one model compiled at several sets of input shapes (an LLM's prefill and
  // decode steps) as one weight-sharing group: <model>_<profile>_ctx.onnx each, one binary per
  // backend named after the first. A profile's shapes add to (and override) input_shapes.
  struct ShapeProfile {
    std::string name;
    graph::InputShapes shapes;
  };
  std::vector<ShapeProfile> shape_profiles;
  // --input-value: fixed values for scalar graph inputs (graph/input_values.h).
  graph::InputValues input_values;
  // --last-token-logits: the output named "logits" keeps only its last position
  // (graph/last_position.h), in every model compiled.
  bool last_token_logits = false;
  // The compiler as recorded in each ctx model (compile/provenance.h); the CLI adds its commit.
  std::string compiler = "ortc " ORTC_VERSION_STRING;
  // Skip the compile when every output is already what it would write (same source digest,
  // options and compiler, binaries paired): the report then says up_to_date.
  bool if_changed = false;
  // Called as work progresses: phase name, done and total units (bytes while writing).
  std::function<void(const std::string& phase, int64_t done, int64_t total)> progress;
  // Called while the output folder's publish lock is held, before this compile's first rename
  // and after its last: a file that must describe the published set (a bundle's manifest) is
  // written there, so no other compile into the folder comes between the two.
  std::function<Status()> before_publish;
  std::function<Status(const CompileReport& published)> after_publish;
};

struct WrittenFile {
  std::filesystem::path path;
  std::string kind;  // "ctx_model", "context_binary", "external_initializers"
  int64_t bytes = 0;
};

struct BackendSummary {
  std::string name;
  int groups = 0;
  int nodes = 0;
  bool compiled = false;  // false: the nodes stay as ONNX nodes in the ctx model
  std::string content_id;
  // Why this backend turned nodes down, by reason, most nodes first.
  std::vector<partition::RefusalGroup> refusals;
};

struct ModelSummary {
  std::filesystem::path source, ctx_model;
  std::string source_sha256;     // compile/provenance.h's SourceDigest, recorded in the ctx model
  int64_t weights = 0;           // weight tensors its graphs use
  int64_t weight_bytes = 0;      // their bytes
  int64_t new_unique_bytes = 0;  // bytes it added to the binary (not already stored)
};

struct CompileReport {
  std::vector<ModelSummary> models;
  std::vector<WrittenFile> files;
  std::vector<BackendSummary> backends;
  int64_t weights_added = 0, weights_stored = 0;
  int64_t weight_bytes_added = 0, weight_bytes_stored = 0;
  std::map<std::string, int> lowering_stats;
  // Milliseconds per phase (kCompilePhases), consecutive so that they add up to "total".
  std::map<std::string, double> phases_ms;
  bool up_to_date = false;  // --if-changed found nothing to do; files lists the ctx models
  // Temporary files of killed compiles found in the output folders and removed.
  std::vector<std::filesystem::path> removed_temp_files;
  // Every compiled graph's tunable choices (what `ortc tune` measures; a tuning cache decides).
  struct Choice {
    std::string backend, graph;
    backends::TunableChoice choice;
  };
  std::vector<Choice> choices;
  // Said once per compile, also on stderr (a tuning cache that does not fit, and why).
  std::vector<std::string> warnings;
};

// The phases of phases_ms, in order: prepare (options, output folders, temporary files of killed
// compiles), hash (the sources' sha256; with --if-changed, the outputs' staleness check), load,
// partition, compile (every backend's binary, written to a temporary file), emit (the ctx models
// and external data, to temporary files), publish (the renames, the bundle manifest).
inline constexpr const char* kCompilePhases[] = {"prepare", "hash", "load",   "partition",
                                                 "compile", "emit", "publish"};

Result<CompileReport> Compile(const CompileOptions& options);

// `<dir>/<stem>_ctx.onnx` for the model, per the options.
std::filesystem::path CtxModelPath(const CompileOptions& options);
// `<ctx dir>/<base>_<ep>.bin` where base is the ctx name without `_ctx.onnx`.
std::filesystem::path BinPath(const std::filesystem::path& ctx_model, const std::string& backend);

}  // namespace ortc::compile
