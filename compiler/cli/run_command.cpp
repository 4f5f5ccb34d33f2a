// `ortc run`: load a (compiled) model with the runtime and run it on given or random inputs.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/report_error.h"
#include "io/feeds.h"
#include "io/tensor_files.h"
#include "kernels/kernel_util.h"
#include "ortc/runtime.h"

namespace ortc::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct RunArgs {
  std::string model;
  std::vector<std::string> inputs;  // name=file
  std::vector<std::string> shapes;  // name=1x3x224x224
  std::string output_dir;
  std::string output_format = "npy";
  int bench = 0;
  uint64_t seed = 0;
  bool json = false;
};

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

int Fail(const RunArgs& a, const Status& s) {
  return ReportError(a.json, s);
}

int Run(const RunArgs& a) {
  const auto t0 = Clock::now();
  auto session = Session::Create(a.model);
  if (!session.ok()) return Fail(a, session.status());
  const double load_s = std::chrono::duration<double>(Clock::now() - t0).count();
  auto feeds = io::MakeFeeds((*session)->inputs(), a.inputs, a.shapes, a.seed);
  if (!feeds.ok()) return Fail(a, feeds.status());
  const auto t1 = Clock::now();
  auto outs = (*session)->Run(*feeds);
  if (!outs.ok()) return Fail(a, outs.status());
  const double first_s = std::chrono::duration<double>(Clock::now() - t1).count();
  std::vector<double> lat;
  for (int i = 0; i < a.bench; ++i) {
    const auto s = Clock::now();
    auto r = (*session)->Run(*feeds);
    if (!r.ok()) return Fail(a, r.status());
    lat.push_back(std::chrono::duration<double>(Clock::now() - s).count() * 1e3);
  }
  if (!a.output_dir.empty()) {
    fs::create_directories(a.output_dir);
    for (size_t i = 0; i < outs->size(); ++i) {
      // Output names may hold path separators (exporters write "a/b"): they become '_'.
      std::string file = (*session)->outputs()[i].name;
      std::replace(file.begin(), file.end(), '/', '_');
      std::replace(file.begin(), file.end(), '\\', '_');
      const fs::path path = fs::path(a.output_dir) / (file + "." + a.output_format);
      Status s = io::WriteTensorFile(path, (*outs)[i], (*session)->outputs()[i].name);
      if (!s.ok()) return Fail(a, s);
    }
  }
  nlohmann::json j{{"ok", true}, {"load_ms", load_s * 1e3}, {"first_run_ms", first_s * 1e3}};
  j["outputs"] = nlohmann::json::array();
  for (size_t i = 0; i < outs->size(); ++i) {
    const Tensor& t = (*outs)[i];
    double sum = 0, mn = INFINITY, mx = -INFINITY;
    for (int64_t k = 0; k < t.elements() && t.dtype() != DataType::kString; ++k) {
      const double v = exec::ReadAsDouble(t, k);
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
  }
  if (!lat.empty())
    j["latency_ms"] = {{"p50", Percentile(lat, 0.5)},
                       {"p90", Percentile(lat, 0.9)},
                       {"p99", Percentile(lat, 0.99)},
                       {"runs", lat.size()}};
  if (a.json) {
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << "load " << j["load_ms"].get<double>() << " ms, first run "
            << j["first_run_ms"].get<double>() << " ms\n";
  for (const auto& o : j["outputs"]) {
    std::cout << "  " << o["name"].get<std::string>() << " " << o["dtype"].get<std::string>()
              << o["shape"].dump() << " mean " << o["mean"] << " min " << o["min"] << " max "
              << o["max"] << "\n";
  }
  if (j.contains("latency_ms")) {
    std::cout << "latency over " << a.bench << " runs: p50 " << j["latency_ms"]["p50"]
              << " ms, p90 " << j["latency_ms"]["p90"] << " ms, p99 " << j["latency_ms"]["p99"]
              << " ms\n";
  }
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
  cmd->add_option("--shape", a->shapes,
                  "name=1x3x224x224: shape of a random input with dynamic dims (default 1)");
  cmd->add_option("--output-dir", a->output_dir, "Write every output as <name>.npy (or .pb) here");
  cmd->add_option("--output-format", a->output_format, "npy, or pb (ONNX TensorProto)")
      ->check(CLI::IsMember({"npy", "pb"}));
  cmd->add_option("--bench", a->bench, "Also time N more runs and print latency percentiles")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", a->seed, "Seed of the random inputs");
  cmd->add_flag("--json", a->json, "Print a machine-readable report");
  cmd->footer(
      std::string("\nExamples:\n  ortc run model_ctx.onnx --input x=x.npy --output-dir out/\n"
                  "  ortc run model_ctx.onnx --bench 100 --json\n\n") +
      kExitCodeHelp);
  cmd->callback([a, exit_code] { *exit_code = Run(*a); });
}

}  // namespace ortc::cli
