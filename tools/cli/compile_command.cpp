// `ortc compile`: compile a model into an EPContext model plus one context binary per backend.
#include <algorithm>
#include <cctype>
#include <iostream>
#include <sstream>

#include "bundle/temp_file.h"
#include "cli/compile_commands.h"
#include "cli/compile_flags.h"
#include "cli/exit_codes.h"
#include "cli/progress.h"
#include "cli/provider_options.h"
#include "cli/report_error.h"
#include "cli/report_records.h"
#include "compile/bundle_manifest.h"
#include "compile/compile_driver.h"
#include "compile/publish_lock.h"
#include "format/context_binary_reader.h"
#include "graph/input_shapes.h"
#include "ortc/runtime.h"
#include "ortc_git_commit.h"
#include "partition/partition_report.h"
#include "registry.h"

namespace ortc::cli {
namespace {

struct CompileArgs {
  compile::CompileOptions options;
  std::vector<std::string> models;
  std::string into;
  std::string output;
  std::string bundle;                       // --bundle DIR
  std::vector<std::string> shape_profiles;  // --shape-profile NAME:name=dims,...
  CompileFlags flags;
  bool json = false;
  bool quiet = false;
};

constexpr const char* kCompiler = "ortc " ORTC_VERSION_STRING " (commit " ORTC_GIT_COMMIT ")";

nlohmann::json BackendJson(const compile::BackendSummary& b) {
  nlohmann::json refusals = nlohmann::json::array();
  for (const auto& r : b.refusals) refusals.push_back(partition::RefusalJson(r));
  return {{"backend", b.name},     {"compiled", b.compiled},     {"group_count", b.groups},
          {"node_count", b.nodes}, {"content_id", b.content_id}, {"refusals", std::move(refusals)}};
}

nlohmann::json WeightsJson(const compile::CompileReport& r) {
  const double ratio = r.weight_bytes_stored
                           ? static_cast<double>(r.weight_bytes_added) / r.weight_bytes_stored
                           : 1.0;
  return {{"count", r.weights_added},
          {"bytes", r.weight_bytes_added},
          {"unique_count", r.weights_stored},
          {"unique_bytes", r.weight_bytes_stored},
          {"dedup_ratio", ratio},
          {"saved_bytes", r.weight_bytes_added - r.weight_bytes_stored}};
}

// Per model: the weights its graphs use, and the bytes it added to the (shared) binary.
nlohmann::json ModelJson(const compile::ModelSummary& m) {
  return {{"source", tools::FileJson(m.source)},
          {"ctx_model", tools::FileJson(m.ctx_model)},
          {"source_sha256", m.source_sha256},
          {"weights",
           {{"count", m.weights},
            {"bytes", m.weight_bytes},
            {"new_unique_bytes", m.new_unique_bytes}}}};
}

nlohmann::json ReportJson(const compile::CompileReport& r) {
  nlohmann::json j;
  j["ok"] = true;
  j["up_to_date"] = r.up_to_date;
  j["files"] = nlohmann::json::array();
  for (const auto& f : r.files) {
    nlohmann::json file = tools::FileJson(f.path);
    file.update({{"kind", f.kind}, {"bytes", f.bytes}});
    j["files"].push_back(std::move(file));
  }
  j["backends"] = nlohmann::json::array();
  for (const auto& b : r.backends) j["backends"].push_back(BackendJson(b));
  j["weights"] = WeightsJson(r);
  j["models"] = nlohmann::json::array();
  for (const auto& m : r.models) j["models"].push_back(ModelJson(m));
  j["removed_temp_files"] = nlohmann::json::array();
  for (const auto& f : r.removed_temp_files) j["removed_temp_files"].push_back(tools::FileJson(f));
  j["lowering"] = r.lowering_stats;
  j["choices"] = nlohmann::json::array();
  for (const auto& c : r.choices) {
    j["choices"].push_back({{"backend", c.backend},
                            {"graph", c.graph},
                            {"step", c.choice.step},
                            {"key", c.choice.key},
                            {"choice", c.choice.choice},
                            {"candidates", c.choice.candidates},
                            {"source", c.choice.source}});
  }
  j["warnings"] = r.warnings;
  j["phases_ms"] = nlohmann::json::object();
  for (const auto& [phase, ms] : r.phases_ms) j["phases_ms"][phase] = tools::RoundMs(ms);
  return j;
}

void PrintText(const CompileArgs& args, const compile::CompileReport& r) {
  if (r.up_to_date) {
    std::cout << "up to date, nothing compiled (--if-changed): same source, options, compiler and "
                 "binaries as\n";
    for (const auto& f : r.files) std::cout << "  " << f.path.string() << "\n";
    return;
  }
  std::cout << "compiled " << args.options.model.string() << "\n";
  for (const auto& b : r.backends) {
    std::cout << "  " << b.name << ": " << b.groups << " group(s), " << b.nodes << " node(s)"
              << (b.compiled ? "" : ", kept as ONNX nodes (not in --ep)") << "\n";
    // The main reasons a requested backend left nodes to others (`ortc partition` lists all).
    constexpr size_t kShown = 3;
    for (size_t i = 0; i < b.refusals.size() && i < kShown; ++i) {
      std::cout << "    refused " << b.refusals[i].nodes.size()
                << " node(s): " << b.refusals[i].reason << "\n";
    }
    if (b.refusals.size() > kShown) {
      std::cout << "    (" << b.refusals.size() - kShown << " more reasons: see ortc partition)\n";
    }
  }
  for (const auto& f : r.removed_temp_files)
    std::cout << "  removed " << f.string() << " (left by a compile that was killed)\n";
  for (const auto& f : r.files) {
    std::cout << "  wrote " << f.path.string() << " (" << partition::FormatBytes(f.bytes) << ")\n";
  }
  std::cout << "  weights: " << r.weights_added << " tensors, "
            << partition::FormatBytes(r.weight_bytes_added) << " -> " << r.weights_stored
            << " stored, " << partition::FormatBytes(r.weight_bytes_stored) << " (dedup saved "
            << partition::FormatBytes(r.weight_bytes_added - r.weight_bytes_stored) << ")\n";
  if (!r.lowering_stats.empty()) {
    std::cout << "  lowering:";
    for (const auto& [k, v] : r.lowering_stats) std::cout << " " << k << "=" << v;
    std::cout << "\n";
  }
  if (!r.choices.empty()) {
    // Which implementation choices a tuning cache made (`ortc tune`), and which the rules did.
    std::map<std::string, int> by_source;
    for (const auto& c : r.choices) by_source[c.choice.source]++;
    std::cout << "  choices:";
    for (const auto& [source, n] : by_source) std::cout << " " << source << "=" << n;
    std::cout << "\n";
  }
  // Every phase, so a slow compile shows where its time went.
  std::cout << "  time: total " << tools::FormatMs(r.phases_ms.at("total")) << " ms (";
  for (const char* phase : compile::kCompilePhases)
    std::cout << (phase == compile::kCompilePhases[0] ? "" : ", ") << phase << " "
              << tools::FormatMs(r.phases_ms.at(phase));
  std::cout << ")\n";
}

int Fail(const CompileArgs& args, const Status& s) {
  return ReportError(args.json, s);
}

// Adding a model to an existing binary is refused, with the reason and the command to run:
// the binary's content id covers all of its content and every ctx model of the group records
// it, so any addition would leave the existing ctx models stale.
Status ExplainInto(const CompileArgs& args) {
  auto bin = format::ContextBinary::OpenFile(args.into);
  if (!bin.ok()) return bin.status();
  std::string graphs;
  for (const auto* g : *(*bin)->manifest().graphs())
    graphs += (graphs.empty() ? "" : ", ") + g->name()->str();
  return InvalidArgument("cannot add to " + args.into + " in place: its content id (" +
                         std::string((*bin)->content_id()) +
                         ") is recorded by every ctx model of the group and would change, leaving "
                         "them stale. Recompile the "
                         "whole group in one command: ortc compile <every model of the group> " +
                         [&] {
                           std::string m;
                           for (const auto& x : args.models) m += x + " ";
                           return m;
                         }() +
                         "--share-weights (the binary now holds graphs: " + graphs + ")");
}

// "decode:input_ids=1x1,attention_mask=1x512" -> {decode, {input_ids: [1,1], ...}}.
Status ParseShapeProfile(const std::string& text, compile::CompileOptions::ShapeProfile* out) {
  const size_t colon = text.find(':');
  const std::string name = text.substr(0, colon == std::string::npos ? 0 : colon);
  const bool plain = !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-';
  });
  if (!plain)
    return InvalidArgument("--shape-profile '" + text +
                           "' must be NAME:input=dims,... with a NAME of letters, digits, _ or - "
                           "(e.g. decode:input_ids=1x1,attention_mask=1x512)");
  out->name = name;
  return graph::ParseInputShape(text.substr(colon + 1), &out->shapes)
      .WithContext("--shape-profile " + name);
}

int Run(CompileArgs& args) {
  auto& o = args.options;
  if (!args.into.empty()) return Fail(args, ExplainInto(args));
  o.model = args.models[0];
  o.more_models.assign(args.models.begin() + 1, args.models.end());
  o.output = args.output;
  if (!args.bundle.empty()) {
    if (!args.output.empty())
      return Fail(args, InvalidArgument("give -o or --bundle, not both (--bundle DIR writes "
                                        "everything into DIR)"));
    o.output = std::filesystem::path(args.bundle) / "";
  }
  o.compiler = kCompiler;
  Status s = ApplyCompileFlags(args.flags, &o);
  if (!s.ok()) return Fail(args, s);
  o.shape_profiles.clear();
  for (const auto& text : args.shape_profiles) {
    compile::CompileOptions::ShapeProfile p;
    s = ParseShapeProfile(text, &p);
    if (!s.ok()) return Fail(args, s);
    o.shape_profiles.push_back(std::move(p));
  }
  Progress progress(!args.quiet && !args.json && InteractiveTerminal());
  o.progress = [&](const std::string& phase, int64_t done, int64_t total) {
    progress.Update(phase, done, total);
  };
  if (!args.bundle.empty()) {
    // The manifest goes with the files it lists, under the folder's publish lock: the old one
    // is removed before the first rename, the new one written after the last. A compile killed
    // in between leaves no manifest (check DIR says so) rather than one of other files.
    const std::filesystem::path manifest =
        std::filesystem::path(args.bundle) / compile::kBundleManifestName;
    o.before_publish = [manifest]() -> Status {
      std::error_code ec;
      std::filesystem::remove(manifest, ec);
      if (ec)
        return IoError(manifest.string() + ": cannot remove the old manifest: " + ec.message());
      return Status::Ok();
    };
    o.after_publish = [&args, &o](const compile::CompileReport& published) {
      const nlohmann::json tools{{"ortc", kCompiler},
                                 {"oneDNN", DescribeCpuKernelLibrary().version},
                                 {"context_binary_format", "1.0"}};
      return compile::WriteBundleManifest(args.bundle, published, o, tools)
          .WithContext("writing the bundle manifest");
    };
  }
  auto report = compile::Compile(o);
  progress.Finish();
  if (!report.ok()) return Fail(args, report.status());
  if (!args.bundle.empty() && report->up_to_date &&
      !std::filesystem::exists(std::filesystem::path(args.bundle) / compile::kBundleManifestName)) {
    // Up to date but without a manifest (a compile killed before writing it): write it now.
    const compile::PublishLock lock(args.bundle);
    if (Status m = o.after_publish(*report); !m.ok()) return Fail(args, m);
  }
  if (!args.bundle.empty()) {
    const auto manifest = std::filesystem::path(args.bundle) / compile::kBundleManifestName;
    std::error_code size_ec;  // written by after_publish: its size is known only now
    report->files.push_back({manifest, "bundle_manifest",
                             static_cast<int64_t>(std::filesystem::file_size(manifest, size_ec))});
  }
  if (args.json) {
    std::cout << ReportText(ReportJson(*report)) << "\n";
  } else if (!args.quiet) {
    PrintText(args, *report);
  }
  return kExitOk;
}

}  // namespace

void AddCompileCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<CompileArgs>();
  auto& o = args->options;
  auto* cmd = app.add_subcommand(
      "compile", "Compile a model into model_ctx.onnx + one context binary per backend");
  cmd->add_option("models", args->models,
                  "ONNX model file(s); several with --share-weights form a group")
      ->required();
  cmd->add_option(
      "--into", args->into,
      "Add the models to an existing group binary: refused, with the command to run instead "
      "(its content id, recorded by every ctx model of the group, would change)");
  cmd->add_flag(
      "--share-weights", o.share_weights,
      "Compile the models as a weight-sharing group: one <model>_ctx.onnx each and one binary per "
      "backend named after the first model, each distinct weight stored once");
  cmd->add_option(
      "--shape-profile", args->shape_profiles,
      "Compile the one model at several input shapes as a weight-sharing group, as "
      "NAME:input=dims,... (repeatable): <model>_<NAME>_ctx.onnx per profile, one binary per "
      "backend, each weight once. For an LLM's prefill and decode steps; --input-shape gives "
      "the shapes they share. With --share-weights and several models, NAME is a model of the "
      "group (its file name without .onnx) and the profile that model's own shapes");
  cmd->add_flag(
      "--last-token-logits", o.last_token_logits,
      "The output named logits keeps only its last position ([batch, 1, vocab] for [batch, "
      "sequence, vocab]), and the LM head runs on that position alone: what generation reads, "
      "at a fraction of a prefill's cost (ortc generate takes such models)");
  cmd->add_option(
      "-o,--output", args->output,
      "Output ctx model path, or an existing folder (default: <model>_ctx.onnx beside the model); "
      "binaries are written beside it as <model>_<ep>.bin");
  cmd->add_option("--embed-mode", o.embed_mode,
                  "0: binaries in separate files (default); 1: inside the ctx model")
      ->check(CLI::IsMember({0, 1}));
  cmd->add_option("--node-name-prefix", o.node_name_prefixes,
                  "Prefix of EPContext node and graph names, once per model (default: <model>_)");
  cmd->add_option("--external-initializers-file", o.external_initializers_file,
                  "Put the initializers of nodes left to the CPU in this file (beside the ctx "
                  "model) instead of "
                  "embedding them");
  cmd->add_flag("--error-if-no-nodes-compiled", o.error_if_no_nodes_compiled,
                "Fail when the backends take no node, or when an accelerator named in --ep "
                "takes none (without it, that is a warning)");
  cmd->add_flag("--error-if-output-exists", o.error_if_output_exists,
                "Fail instead of replacing existing outputs");
  cmd->add_option("--bundle", args->bundle,
                  "Write a bundle: the ctx models, binaries and external data into this folder, "
                  "with manifest.json listing every file's size and sha256, the options, the "
                  "sources' digests and the tool versions (ortc check DIR verifies it)");
  cmd->add_flag("--if-changed", o.if_changed,
                "Skip the compile when the outputs are up to date: each ctx model records the "
                "source's sha256, the options and the compiler, and its binaries are the ones it "
                "was written with (exit 0, report up_to_date)");
  AddCompileFlags(cmd, &args->flags, /*shape_alias=*/false);
  cmd->add_flag("--json", args->json, "Print a machine-readable report on stdout");
  cmd->add_flag("-q,--quiet", args->quiet, "No progress display and no summary");
  cmd->footer(
      "\nExamples:\n"
      "  ortc compile model.onnx                        # CPU bundle: model_ctx.onnx + "
      "model_cpu.bin\n"
      "  ortc compile model.onnx -o out/ --json         # into out/, report for CI\n"
      "  ortc compile model.onnx --embed-mode 1         # one self-contained model_ctx.onnx\n"
      "  ortc compile model.onnx --ep cuda,cpu --input-shape x=1x3x224x224 --precision fp16\n"
      "  ortc compile model.onnx --ep cpu --input-shape x=1x3x224x224 --target-isa native\n"
      "  ortc compile vad.onnx --ep cuda,cpu --input-value sr=16000   # resolve If on sr\n"
      "  ortc compile model.onnx --external-initializers-file weights.data\n"
      "  ortc compile prefill.onnx decode.onnx --share-weights -o out/   # 2 ctx models + 1 bin\n"
      "  ortc compile llm.onnx --ep cuda,cpu --shape-profile prefill:input_ids=1x128 \\\n"
      "      --shape-profile decode:input_ids=1x1 --input-shape attention_mask=1x512,... -o "
      "out/\n"
      "  ortc compile llm.onnx --shape-profile prefill:input_ids=1x128 \\\n"
      "      --shape-profile decode:input_ids=1x1 --last-token-logits   # logits of one position\n"
      "  ortc compile prefill.onnx decode.onnx --share-weights --ep cuda,cpu \\\n"
      "      --shape-profile prefill:input_ids=1x16,attention_mask=1x16,position_ids=1x16 \\\n"
      "      --shape-profile decode:input_ids=1x1,attention_mask=1x512,position_ids=1x1 \\\n"
      "      --input-shape past_key_0=1x8x511x64,...   # a 512-position sliding window\n"
      "  ortc compile model.onnx --ep npu,cuda,cpu --backend-path build-npu   # an out-of-tree "
      "backend\n\n"
      "Writes are atomic: on failure or interruption no output file is left half-written.\n" +
      std::string(kExitCodeHelp));
  cmd->callback([args, exit_code] { *exit_code = Run(*args); });
}

}  // namespace ortc::cli
