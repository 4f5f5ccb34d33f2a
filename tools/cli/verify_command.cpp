// `ortc verify`: compile to a temporary folder, run the compiled model and the source model
// (uncompiled, on the runtime's CPU kernels) on the same inputs, and compare.
#include <cmath>
#include <filesystem>
#include <iostream>
#include <random>

#include <nlohmann/json.hpp>

#include "base/temp_registry.h"
#include "bundle/temp_file.h"
#include "cli/compile_commands.h"
#include "cli/compile_flags.h"
#include "cli/exit_codes.h"
#include "cli/report_error.h"
#include "cli/report_records.h"
#include "cli/source_models.h"
#include "compile/compile_driver.h"
#include "graph/input_shapes.h"
#include "graph/model.h"
#include "io/feeds.h"
#include "io/tensor_files.h"
#include "ortc/runtime.h"
#include "registry.h"

namespace ortc::cli {
namespace {

namespace fs = std::filesystem;

struct VerifyArgs {
  std::string model;
  CompileFlags compile;  // the same flags as `ortc compile`
  std::vector<std::string> inputs, expected;
  double rtol = -1, atol = -1;  // < 0: the precision's tolerance
  uint64_t seed = 0;
  int threads = 0;  // intra-op threads of both sessions; 0: one per physical core
  bool json = false;
};

struct Diff {
  double max_abs = 0, max_rel = 0;
  bool ok = true;
  std::string problem;
};

Diff Compare(const Tensor& got, const Tensor& want, double rtol, double atol) {
  Diff d;
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    d.ok = false;
    d.problem = "dtype or shape differs";
    return d;
  }
  if (got.dtype() == DataType::kString) {
    d.ok = got.strings() == want.strings();
    return d;
  }
  for (int64_t i = 0; i < got.elements(); ++i) {
    const double g = ElementAsDouble(got, i), w = ElementAsDouble(want, i);
    if (std::isnan(g) && std::isnan(w)) continue;
    const double abs = std::fabs(g - w), rel = abs / std::max(std::fabs(w), 1e-12);
    d.max_abs = std::max(d.max_abs, abs);
    d.max_rel = std::max(d.max_rel, std::min(rel, 1e300));
    if (abs > atol + rtol * std::fabs(w)) d.ok = false;
  }
  return d;
}

// Default tolerances per CUDA precision, against the source model on the fp32 CPU kernels. fp32
// differs only by summation order. tf32 rounds convolution and GEMM inputs to a 10-bit
// significand and fp16 stores every value with one (relative step 2^-11), bf16 with 7 (2^-8);
// these errors add up over a network's layers, so the bounds are 20 steps: 1e-2 for tf32 and
// fp16, 8e-2 for bf16 (the emulator's end-to-end bounds; PP-OCRv4 rec measured 3.4e-3 relative
// L2 at tf32 on an H100).
std::pair<double, double> DefaultTolerance(const std::string& precision) {
  if (precision == "tf32" || precision == "fp16") return {1e-2, 1e-2};
  if (precision == "bf16") return {8e-2, 8e-2};
  return {1e-4, 1e-5};
}

// The source model on the CPU kernels, its rewritten ops (com.microsoft, newer ai.onnx) as the
// compiler reads them (cli/source_models.h).
Result<std::unique_ptr<Session>> SourceSession(const fs::path& model,
                                               const graph::InputShapes& shapes, int threads) {
  SessionOptions so;
  so.intra_op_threads = threads;
  return OpenSourceModel(model, so, shapes);
}

int Run(VerifyArgs a) {
  // What is known so far goes with a failure too: the model, then the inputs once fed.
  nlohmann::json j{{"model", tools::FileJson(a.model)}};
  auto fail = [&](const Status& s) { return ReportError(a.json, s, j); };
  const std::string precision = a.compile.precision.empty() ? "fp32" : a.compile.precision;
  const auto [rtol, atol] = DefaultTolerance(precision);
  if (a.rtol < 0) a.rtol = rtol;
  if (a.atol < 0) a.atol = atol;
  std::random_device rd;
  const fs::path work = fs::temp_directory_path() / ("ortc-verify-" + std::to_string(rd()));
  fs::create_directories(work);
  compile::CompileOptions o;
  o.model = a.model;
  o.output = work / "model_ctx.onnx";
  // The folder and what the compile publishes in it go on return and on Ctrl-C alike (the
  // signal handler removes registered files, then registered folders left empty).
  std::vector<std::string> scratch = {work.string(), o.output.string()};
  for (const auto* b : backends::AllBackends())
    scratch.push_back(compile::BinPath(o.output, std::string(b->name())).string());
  for (const auto& p : scratch) format::RegisterTempPath(p);
  struct Cleanup {
    fs::path dir;
    std::vector<std::string> registered;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
      for (const auto& p : registered) format::UnregisterTempPath(p);
    }
  } cleanup{work, scratch};
  Status flags = ApplyCompileFlags(a.compile, &o);
  if (!flags.ok()) return ReportError(a.json, flags, j, kExitUsage);
  auto compiled = compile::Compile(o);
  if (!compiled.ok()) return fail(compiled.status());
  // An accelerator asked for that took nothing would make the comparison CPU against CPU (the
  // CPU, last, may rightly be left nothing).
  for (const auto& b : compiled->backends) {
    const bool asked = std::find(o.backends.begin(), o.backends.end(), b.name) != o.backends.end();
    if (!asked || b.groups > 0 || b.name == "cpu") continue;
    std::string why;
    for (size_t i = 0; i < b.refusals.size() && i < 3; ++i)
      why += "\n  " + b.refusals[i].reason + " (" + std::to_string(b.refusals[i].nodes.size()) +
             " node(s))";
    return fail(NotImplemented(
        "backend " + b.name + " compiled no node, so there is nothing of it to verify" +
        (why.empty() ? std::string() : ":" + why) +
        "\n(fix its refusals, e.g. with --input-shape, or drop it from --ep)"));
  }
  SessionOptions run_options;
  run_options.intra_op_threads = a.threads;
  auto ctx = Session::Create(o.output, run_options);
  if (!ctx.ok()) return fail(ctx.status());
  auto src = SourceSession(a.model, o.input_shapes, a.threads);
  if (!src.ok())
    return fail(src.status().WithContext("running the source model on the CPU kernels"));
  // Random inputs of a fixed input take its --input-shape.
  auto feeds = io::MakeFeeds((*ctx)->inputs(), a.inputs, a.compile.input_shapes, a.seed);
  if (!feeds.ok()) return fail(feeds.status());
  j["inputs"] = tools::InputsJson((*ctx)->inputs(), *feeds, a.inputs, a.compile.input_shapes);
  auto got = (*ctx)->Run(*feeds);
  if (!got.ok()) return fail(got.status());
  auto want = (*src)->Run(*feeds);
  if (!want.ok()) return fail(want.status());
  std::map<std::string, Tensor> expected;
  for (const auto& spec : a.expected) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos)
      return fail(InvalidArgument("--expected '" + spec + "' is not name=file"));
    auto t = io::ReadTensorFile(spec.substr(eq + 1));
    if (!t.ok()) return fail(t.status());
    expected[spec.substr(0, eq)] = *t;
  }
  bool all_ok = true;
  j.update({{"rtol", a.rtol},
            {"atol", a.atol},
            {"precision", precision},
            {"outputs", nlohmann::json::array()}});
  for (size_t i = 0; i < got->size(); ++i) {
    const std::string name = (*ctx)->outputs()[i].name;
    const Diff d = Compare((*got)[i], (*want)[i], a.rtol, a.atol);
    nlohmann::json jo{
        {"name", name}, {"max_abs_error", d.max_abs}, {"max_rel_error", d.max_rel}, {"ok", d.ok}};
    if (!d.problem.empty()) jo["problem"] = d.problem;
    all_ok = all_ok && d.ok;
    if (expected.count(name)) {
      const Diff e = Compare((*got)[i], expected[name], a.rtol, a.atol);
      jo["expected"] = {{"max_abs_error", e.max_abs}, {"max_rel_error", e.max_rel}, {"ok", e.ok}};
      all_ok = all_ok && e.ok;
    }
    j["outputs"].push_back(jo);
  }
  j["ok"] = all_ok;
  if (a.json) {
    std::cout << ReportText(j) << "\n";
  } else {
    for (const auto& jo : j["outputs"]) {
      std::cout << "  " << jo["name"].get<std::string>() << ": max abs " << jo["max_abs_error"]
                << ", max rel " << jo["max_rel_error"]
                << (jo["ok"].get<bool>() ? " ok" : " MISMATCH");
      if (jo.contains("expected"))
        std::cout << "; vs expected: max abs " << jo["expected"]["max_abs_error"]
                  << (jo["expected"]["ok"].get<bool>() ? " ok" : " MISMATCH");
      std::cout << "\n";
    }
    std::cout << (all_ok ? "verify: compiled model matches the source model\n"
                         : "verify: MISMATCH beyond tolerances\n");
  }
  return all_ok ? kExitOk : kExitMismatch;
}

}  // namespace

void AddVerifyCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<VerifyArgs>();
  auto* cmd = app.add_subcommand(
      "verify", "Compile a model, run compiled and source side by side, compare outputs");
  cmd->add_option("model", a->model, "Source ONNX model")->required();
  AddCompileFlags(cmd, &a->compile, /*shape_alias=*/true);
  cmd->add_option("--input", a->inputs,
                  "name=file.npy|.pb (repeatable); missing inputs are random");
  cmd->add_option("--expected", a->expected,
                  "name=file: also compare the compiled output with this");
  cmd->add_option("--rtol", a->rtol,
                  "Relative tolerance (default by precision: fp32 1e-4, tf32 and fp16 1e-2, "
                  "bf16 8e-2)");
  cmd->add_option("--atol", a->atol,
                  "Absolute tolerance (default by precision: fp32 1e-5, tf32 and fp16 1e-2, "
                  "bf16 8e-2)");
  cmd->add_option("--seed", a->seed, "Seed of the random inputs");
  cmd->add_option("--threads", a->threads,
                  "Threads each run uses inside its ops (0: one per physical core; at most the "
                  "machine's logical CPUs are used)")
      ->default_val(0)
      ->check(CLI::Range(0, 4096));
  cmd->add_flag("--json", a->json, "Print a machine-readable report");
  cmd->footer(std::string("\nExamples:\n  ortc verify model.onnx\n  ortc verify model.onnx --input "
                          "x=x.npy --expected y=y.npy --json\n"
                          "  ortc verify model.onnx --ep cuda,cpu --input-shape x=1x3x224x224 "
                          "--precision fp16\n\n") +
              kExitCodeHelp);
  cmd->callback([a, exit_code] { *exit_code = Run(*a); });
}

}  // namespace ortc::cli
