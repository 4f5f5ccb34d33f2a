// `ortc run`: load a (compiled) model with the runtime and run it on given or random inputs.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include <unistd.h>
#include "cli/exit_codes.h"
#include "cli/model_opener.h"
#include "cli/openmp_waiting.h"
#include "cli/progress.h"
#include "cli/provider_options.h"
#include "cli/report_error.h"
#include "cli/report_records.h"

#include "base/temp_names.h"
#include "base/temp_registry.h"
#include "cli/runtime_commands.h"
#include "io/feeds.h"
#include "io/tensor_files.h"
#include "ortc/runtime.h"

namespace ortc::cli {
namespace {

// One file name per output, all different: path separators and NULs (exporters write "a/b"; a
// name may hold anything) become '_', an empty or dot-only name becomes output_<i>, and a name
// that an earlier output already took gets _2, _3... (said on stderr), never overwriting it.
std::vector<std::string> OutputFileNames(const std::vector<TensorInfo>& outputs) {
  std::vector<std::string> files;
  std::set<std::string> taken;
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string file = outputs[i].name;
    for (char& c : file)
      if (c == '/' || c == '\\' || c == '\0') c = '_';
    if (file.find_first_not_of('.') == std::string::npos) file = "output_" + std::to_string(i);
    std::string unique = file;
    for (int k = 2; taken.count(unique); ++k) unique = file + "_" + std::to_string(k);
    if (unique != file)
      std::cerr << "warning: output '" << outputs[i].name << "' is written as " << unique
                << " (another output already has the file name " << file << ")\n";
    taken.insert(unique);
    files.push_back(unique);
  }
  return files;
}

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct RunArgs {
  std::string model;
  std::vector<std::string> inputs;  // name=file
  std::vector<std::string> shapes;  // name=1x3x224x224
  std::string output_dir;
  std::string output_format = "npy";
  std::vector<std::string> provider_options;  // backend:key=value, the runtime's options
  std::string profile;                        // Chrome trace file
  int bench = 0;
  int warmup = 0;   // untimed runs before the timed ones
  int threads = 0;  // intra-op threads; 0: one per physical core
  uint64_t seed = 0;
  bool json = false;
};

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

// A failure's report names the model, so a CI log says which one failed.
int Fail(const RunArgs& a, const Status& s) {
  return ReportError(a.json, s, {{"model", tools::FileJson(a.model)}});
}

// Per backend graph: how it runs (the backend's description, e.g. CUDA graph or stream).
nlohmann::json GraphsJson(const LoadReport& r) {
  nlohmann::json graphs = nlohmann::json::array();
  for (const auto& g : r.graphs) {
    nlohmann::json j = nlohmann::json::parse(g.json, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) j = nlohmann::json::object();
    j["node"] = g.node;
    j["backend"] = g.backend;
    j["graph"] = g.graph;
    graphs.push_back(std::move(j));
  }
  return graphs;
}

int Run(const RunArgs& a) {
  SessionOptions options;
  Status parsed = ParseProviderOptions(a.provider_options, &options.provider_options);
  if (!parsed.ok())
    return ReportError(a.json, parsed, {{"model", tools::FileJson(a.model)}}, kExitUsage);
  options.enable_profiling = !a.profile.empty();
  // The trace's folder is checked before any work: an unwritable path fails now, not after the
  // runs.
  if (!a.profile.empty()) {
    const fs::path folder =
        fs::path(a.profile).has_parent_path() ? fs::path(a.profile).parent_path() : fs::path(".");
    std::error_code ec;
    if (!fs::is_directory(folder, ec))
      return Fail(a, NoSuchFile("--profile " + a.profile + ": folder " + folder.string() +
                                " does not exist"));
    if (::access(folder.c_str(), W_OK) != 0)
      return Fail(a, IoError("--profile " + a.profile + ": folder " + folder.string() +
                             " is not writable"));
  }
  options.intra_op_threads = a.threads;
  const auto t0 = Clock::now();
  auto session = OpenModel(a.model, options);
  if (!session.ok()) return Fail(a, session.status());
  const double load_s = std::chrono::duration<double>(Clock::now() - t0).count();
  auto feeds = io::MakeFeeds((*session)->inputs(), a.inputs, a.shapes, a.seed);
  if (!feeds.ok()) return Fail(a, feeds.status());
  const auto t1 = Clock::now();
  auto outs = (*session)->Run(*feeds);
  if (!outs.ok()) return Fail(a, outs.status());
  const double first_s = std::chrono::duration<double>(Clock::now() - t1).count();
  // Long benchmarks show how far they are on a terminal (a run can take seconds on the CPU).
  Progress progress(!a.json && InteractiveTerminal());
  for (int i = 0; i < a.warmup; ++i) {
    auto r = (*session)->Run(*feeds);
    if (!r.ok()) return Fail(a, r.status());
    progress.Update("warmup", i + 1, a.warmup, Progress::Unit::kRuns);
  }
  // Ctrl-C (or SIGTERM, SIGHUP) during a benchmark ends it early: the runs so far are reported
  // (marked interrupted), then the process dies of the signal as it would have.
  std::optional<format::TerminationSignalsHeld> held;
  if (a.bench > 0) held.emplace();
  std::vector<double> lat;
  for (int i = 0; i < a.bench && !format::HeldSignal(); ++i) {
    const auto s = Clock::now();
    auto r = (*session)->Run(*feeds);
    if (!r.ok()) return Fail(a, r.status());
    lat.push_back(std::chrono::duration<double>(Clock::now() - s).count() * 1e3);
    progress.Update("bench", i + 1, a.bench, Progress::Unit::kRuns);
  }
  progress.Finish();
  std::vector<std::string> written;  // per output, the file that holds it (with --output-dir)
  std::vector<fs::path> removed_temp_files;
  if (!a.output_dir.empty()) {
    std::error_code ec;
    fs::create_directories(a.output_dir, ec);
    if (ec)
      return Fail(a,
                  IoError("cannot make the output folder " + a.output_dir + ": " + ec.message()));
    // Temporary files of earlier runs killed mid-write (SIGKILL) go now.
    for (const auto& p : format::RemoveStaleTempFiles(a.output_dir))
      removed_temp_files.push_back(p);
    const std::vector<std::string> files = OutputFileNames((*session)->outputs());
    for (size_t i = 0; i < outs->size(); ++i) {
      const fs::path path = fs::path(a.output_dir) / (files[i] + "." + a.output_format);
      const Tensor& value = (*outs)[i];
      Status s = value.is_tensor()
                     ? io::WriteTensorFile(path, value, (*session)->outputs()[i].name)
                     : io::WriteContainerFile(path, value, (*session)->outputs()[i].name);
      if (!s.ok()) return Fail(a, s);
      written.push_back(path.string());
    }
  }
  if (!a.profile.empty()) {
    Status s = (*session)->EndProfiling(a.profile);
    if (!s.ok()) return Fail(a, s);
  }
  nlohmann::json j{{"ok", true},
                   {"model", tools::FileJson(a.model)},
                   {"load_ms", tools::RoundMs(load_s * 1e3)},
                   {"first_run_ms", tools::RoundMs(first_s * 1e3)}};
  j["graphs"] = GraphsJson((*session)->load_report());
  // How idle intra-op workers wait (openmp_waiting.cpp): the first thing to check when runs
  // are slow only while other processes are busy.
  j["openmp_waiting"] = OpenMpWaiting();
  // What was fed: a file, or random values (and whether dynamic dims were set to 1), so that
  // generated data is never taken for the user's.
  j["inputs"] = tools::InputsJson((*session)->inputs(), *feeds, a.inputs, a.shapes);
  if (!a.profile.empty()) j["profile"] = tools::FileJson(a.profile);
  if (!removed_temp_files.empty()) {
    j["removed_temp_files"] = nlohmann::json::array();
    for (const auto& p : removed_temp_files) j["removed_temp_files"].push_back(tools::FileJson(p));
  }
  j["outputs"] = nlohmann::json::array();
  for (size_t i = 0; i < outs->size(); ++i) {
    const Tensor& t = (*outs)[i];
    if (!t.is_tensor()) {  // a sequence: its length and element type; an empty optional
      j["outputs"].push_back({{"name", (*session)->outputs()[i].name},
                              {"dtype", DataTypeName(t.dtype())},
                              {"kind", t.is_sequence() ? "sequence" : "empty optional"},
                              {"length", t.items().size()}});
      if (i < written.size()) j["outputs"].back()["file"] = tools::FileJson(written[i]);
      continue;
    }
    double sum = 0, mn = INFINITY, mx = -INFINITY;
    for (int64_t k = 0; k < t.elements() && t.dtype() != DataType::kString; ++k) {
      const double v = ElementAsDouble(t, k);
      sum += v;
      mn = std::min(mn, v);
      mx = std::max(mx, v);
    }
    j["outputs"].push_back({{"name", (*session)->outputs()[i].name},
                            {"dtype", DataTypeName(t.dtype())},
                            {"shape", t.shape()},
                            {"mean", t.elements() ? sum / static_cast<double>(t.elements()) : 0},
                            {"min", mn},
                            {"max", mx}});
    // Names a file system cannot hold, or that collide once made safe, get other file names:
    // the report says which file holds which output.
    if (i < written.size()) j["outputs"].back()["file"] = tools::FileJson(written[i]);
  }
  if (!lat.empty())
    j["latency_ms"] = {{"p50", tools::RoundMs(Percentile(lat, 0.5))},
                       {"p90", tools::RoundMs(Percentile(lat, 0.9))},
                       {"p99", tools::RoundMs(Percentile(lat, 0.99))},
                       {"runs", lat.size()}};
  const int interrupted = format::HeldSignal();
  if (interrupted)
    j["interrupted"] = {{"signal", interrupted == SIGINT    ? "SIGINT"
                                   : interrupted == SIGTERM ? "SIGTERM"
                                                            : "SIGHUP"},
                        {"runs_done", lat.size()},
                        {"runs_asked", a.bench}};
  if (a.json) {
    std::cout << ReportText(j) << std::endl;
    return kExitOk;
  }
  for (const auto& in : j["inputs"]) {
    if (in["source"] != "random") continue;
    std::cout << "input " << in["name"].get<std::string>() << ": random "
              << in["dtype"].get<std::string>()
              << (in["shape"].is_array() ? in["shape"].dump() : "")
              << (in.contains("dynamic_dims_set_to")
                      ? " (dynamic dims set to 1: give --input-shape or --input)"
                      : "")
              << "\n";
  }
  std::cout << "load " << tools::FormatMs(load_s * 1e3) << " ms, first run "
            << tools::FormatMs(first_s * 1e3) << " ms\n";
  for (const auto& g : j["graphs"]) {
    std::cout << "  " << g["backend"].get<std::string>() << " graph '"
              << g["graph"].get<std::string>() << "': " << g.value("execution", "?");
    if (g.contains("reason")) std::cout << " (" << g["reason"].get<std::string>() << ")";
    std::cout << "\n";
  }
  for (const auto& o : j["outputs"]) {
    if (o.contains("kind")) {
      std::cout << "  " << o["name"].get<std::string>() << " " << o["kind"].get<std::string>()
                << " of " << o["length"] << " " << o["dtype"].get<std::string>() << " tensor(s)\n";
      continue;
    }
    std::cout << "  " << o["name"].get<std::string>() << " " << o["dtype"].get<std::string>()
              << o["shape"].dump() << " mean " << o["mean"] << " min " << o["min"] << " max "
              << o["max"] << "\n";
  }
  if (!a.profile.empty()) std::cout << "profile written to " << a.profile << "\n";
  if (j.contains("latency_ms")) {
    std::cout << "latency over " << lat.size() << " runs: p50 "
              << tools::FormatMs(Percentile(lat, 0.5)) << " ms, p90 "
              << tools::FormatMs(Percentile(lat, 0.9)) << " ms, p99 "
              << tools::FormatMs(Percentile(lat, 0.99)) << " ms";
    if (interrupted) std::cout << " (interrupted after " << lat.size() << " of " << a.bench << ")";
    std::cout << "\n";
  }
  std::cout.flush();  // before a held signal ends the process
  return kExitOk;
}

}  // namespace

void AddRunCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<RunArgs>();
  auto* cmd =
      app.add_subcommand("run", "Run a compiled (or plain) ONNX model with the ortc runtime");
  cmd->add_option("model", a->model, "model_ctx.onnx (or any ONNX model the CPU kernels cover)")
      ->required();
  cmd->add_option("--input", a->inputs,
                  "name=file.npy or name=file.pb (repeatable); missing inputs are random");
  cmd->add_option("--input-shape,--shape", a->shapes,
                  "name=1x3x224x224 (repeatable, or comma-separated): shape of a random input "
                  "with dynamic dims (default 1); --shape is the same option");
  cmd->add_option("--output-dir", a->output_dir, "Write every output as <name>.npy (or .pb) here");
  cmd->add_option("--output-format", a->output_format, "npy, or pb (ONNX TensorProto)")
      ->check(CLI::IsMember({"npy", "pb"}));
  cmd->add_option("--bench", a->bench, "Also time N more runs and print latency percentiles")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--warmup", a->warmup,
                  "Untimed runs between the first run and the --bench runs, so percentiles show "
                  "the steady state (thread pools spun up, caches warm)")
      ->check(CLI::Range(0, 1000000));
  cmd->add_option("--threads", a->threads,
                  "Threads each run uses inside its ops (0: one per physical core; at most the "
                  "machine's logical CPUs are used)")
      ->default_val(0)
      ->check(CLI::Range(0, 4096));
  cmd->add_option("--seed", a->seed, "Seed of the random inputs");
  cmd->add_option("--provider-option", a->provider_options,
                  "Backend run-time option, as backend:key=value (repeatable); cuda: "
                  "enable_cuda_graph=0|1 (default 1: each run replays one CUDA graph), "
                  "host_copy_threads=N (threads copying large host tensors; default half the "
                  "cores, at most 8)");
  cmd->add_option("--profile", a->profile,
                  "Time every node and every backend step of every run and write a Chrome trace "
                  "(JSON; open in chrome://tracing or Perfetto). Backend graphs then run step "
                  "by step, without CUDA graphs");
  cmd->add_flag("--json", a->json,
                "Print a machine-readable report (outputs, latency, and per backend graph how it "
                "runs: \"execution\": \"cuda_graph\" or \"stream\" with the reason)");
  cmd->footer(
      std::string(
          "\nExamples:\n  ortc run model_ctx.onnx --input x=x.npy --output-dir out/\n"
          "  ortc run model_ctx.onnx --bench 100 --json\n"
          "  ortc run model_ctx.onnx --bench 100 --threads 1\n"
          "  ortc run model_ctx.onnx --bench 20 --profile trace.json\n"
          "  ortc run model_ctx.onnx --provider-option cuda:enable_cuda_graph=0 --bench 100\n\n") +
      kExitCodeHelp);
  cmd->callback([a, exit_code] { *exit_code = Run(*a); });
}

}  // namespace ortc::cli
