// `ortc verify`: compile to a temporary folder, run the compiled model and the source model
// (uncompiled, on the runtime's CPU kernels) on the same inputs, and compare.
#include <cmath>
#include <filesystem>
#include <iostream>
#include <random>

#include <nlohmann/json.hpp>

#include "bundle/temp_file.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/report_error.h"
#include "compile/compile_driver.h"
#include "io/feeds.h"
#include "io/tensor_files.h"
#include "kernels/kernel_util.h"
#include "ortc/runtime.h"

namespace ortc::cli {
namespace {

namespace fs = std::filesystem;

struct VerifyArgs {
  std::string model, eps = "cpu";
  std::vector<std::string> inputs, shapes, expected;
  double rtol = 1e-4, atol = 1e-5;
  uint64_t seed = 0;
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
    const double g = exec::ReadAsDouble(got, i), w = exec::ReadAsDouble(want, i);
    if (std::isnan(g) && std::isnan(w)) continue;
    const double abs = std::fabs(g - w), rel = abs / std::max(std::fabs(w), 1e-12);
    d.max_abs = std::max(d.max_abs, abs);
    d.max_rel = std::max(d.max_rel, std::min(rel, 1e300));
    if (abs > atol + rtol * std::fabs(w)) d.ok = false;
  }
  return d;
}

int Run(const VerifyArgs& a) {
  auto fail = [&](const Status& s) { return ReportError(a.json, s); };
  std::random_device rd;
  const fs::path work = fs::temp_directory_path() / ("ortc-verify-" + std::to_string(rd()));
  fs::create_directories(work);
  struct Cleanup {
    fs::path p;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(p, ec);
    }
  } cleanup{work};
  compile::CompileOptions o;
  o.model = a.model;
  o.output = work / "model_ctx.onnx";
  o.backends.clear();
  std::stringstream ss(a.eps);
  for (std::string b; std::getline(ss, b, ',');) {
    if (!b.empty()) o.backends.push_back(b);
  }
  auto compiled = compile::Compile(o);
  if (!compiled.ok()) return fail(compiled.status());
  auto ctx = Session::Create(o.output);
  if (!ctx.ok()) return fail(ctx.status());
  auto src = Session::Create(a.model);
  if (!src.ok())
    return fail(src.status().WithContext("running the source model on the CPU kernels"));
  auto feeds = io::MakeFeeds((*ctx)->inputs(), a.inputs, a.shapes, a.seed);
  if (!feeds.ok()) return fail(feeds.status());
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
  nlohmann::json j{{"rtol", a.rtol}, {"atol", a.atol}, {"outputs", nlohmann::json::array()}};
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
    std::cout << j.dump(2) << "\n";
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
  cmd->add_option("--ep", a->eps, "Backends to compile for")->default_val("cpu");
  cmd->add_option("--input", a->inputs,
                  "name=file.npy|.pb (repeatable); missing inputs are random");
  cmd->add_option("--shape", a->shapes, "name=1x3x224x224 for random inputs with dynamic dims");
  cmd->add_option("--expected", a->expected,
                  "name=file: also compare the compiled output with this");
  cmd->add_option("--rtol", a->rtol, "Relative tolerance")->default_val(1e-4);
  cmd->add_option("--atol", a->atol, "Absolute tolerance")->default_val(1e-5);
  cmd->add_option("--seed", a->seed, "Seed of the random inputs");
  cmd->add_flag("--json", a->json, "Print a machine-readable report");
  cmd->footer(std::string("\nExamples:\n  ortc verify model.onnx\n  ortc verify model.onnx --input "
                          "x=x.npy --expected y=y.npy --json\n\n") +
              kExitCodeHelp);
  cmd->callback([a, exit_code] { *exit_code = Run(*a); });
}

}  // namespace ortc::cli
