// `ortc tune`: measure a model's tunable choices on this machine's GPU and write a tuning cache
// for `ortc compile --tuning-cache` on machines without one (tools/tune/tune_driver.h).
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "bundle/temp_file.h"
#include "cli/compile_commands.h"
#include "cli/exit_codes.h"
#include "cli/provider_options.h"
#include "cli/report_error.h"
#include "cli/report_records.h"
#include "graph/input_shapes.h"
#include "graph/input_values.h"
#include "ortc_git_commit.h"
#include "tune/tune_driver.h"

namespace ortc::cli {
namespace {

struct TuneArgs {
  std::string model, output, backend = "cuda", precision;
  std::vector<std::string> shapes, values, provider_options;
  int runs = 20, warmup = 3;
  uint64_t seed = 0;
  bool json = false, quiet = false;
};

Status WriteCache(const std::string& path, const std::string& text) {
  auto file = bundle::TempFile::Create(path);
  if (!file.ok()) return file.status();
  ORTC_RETURN_IF_ERROR((*file)->Write(std::as_bytes(std::span(text.data(), text.size()))));
  ORTC_RETURN_IF_ERROR((*file)->Sync());
  return (*file)->Commit();
}

int Run(const TuneArgs& a) {
  const nlohmann::json known{{"model", tools::FileJson(a.model)}};
  auto fail = [&](const Status& s) { return ReportError(a.json, s, known); };
  tune::TuneOptions o;
  o.backend = a.backend;
  o.compile.model = a.model;
  o.compile.backends = {a.backend, "cpu"};
  o.compile.compiler = "ortc " ORTC_VERSION_STRING " (commit " ORTC_GIT_COMMIT ")";
  Status s = ParseProviderOptions(a.provider_options, &o.compile.provider_options);
  if (s.ok() && !a.precision.empty())
    o.compile.provider_options[a.backend]["precision"] = a.precision;
  for (const auto& text : a.shapes) {
    if (s.ok()) s = graph::ParseInputShape(text, &o.compile.input_shapes);
  }
  for (const auto& text : a.values) {
    if (s.ok()) s = graph::ParseInputValue(text, &o.compile.input_values);
  }
  if (!s.ok()) return ReportError(a.json, s, known, kExitUsage);
  o.shapes = a.shapes;
  o.runs = a.runs;
  o.warmup = a.warmup;
  o.seed = a.seed;
  if (!a.quiet && !a.json) o.progress = [](const std::string& p) { std::cerr << p << "...\n"; };
  auto r = tune::Tune(o);
  if (!r.ok()) return fail(r.status());
  s = WriteCache(a.output, backends::TuningCacheJson(r->cache));
  if (!s.ok()) return fail(s.WithContext("writing the tuning cache"));
  const double ratio = r->rule_ms > 0 ? r->tuned_ms / r->rule_ms : 1.0;
  if (a.json) {
    nlohmann::json j = known;
    j.update({{"ok", true},
              {"cache", tools::FileJson(a.output)},
              {"device", r->cache.device},
              {"runs", a.runs},
              {"changed", r->changed},
              {"rule_ms", tools::RoundMs(r->rule_ms)},
              {"tuned_ms", tools::RoundMs(r->tuned_ms)},
              {"tuned_vs_rule", ratio},
              {"choices", nlohmann::json::array()}});
    for (const auto& c : r->choices) {
      // Device times are microseconds apart: kept to the nanosecond.
      nlohmann::json median_ms = nlohmann::json::object();
      for (const auto& [candidate, us] : c.median_us)
        median_ms[candidate] = std::round(us * 1e3) / 1e6;
      j["choices"].push_back({{"key", c.key},
                              {"choice", c.choice},
                              {"rule_choice", c.rule_choice},
                              {"median_ms", median_ms},
                              {"steps", c.steps}});
    }
    std::cout << ReportText(j) << "\n";
    return kExitOk;
  }
  if (a.quiet) return kExitOk;
  std::string device;
  for (const auto& [k, v] : r->cache.device) device += (device.empty() ? "" : ", ") + k + " " + v;
  std::cout << "tuned " << a.model << " on " << device << " (" << a.runs
            << " timed runs per variant)\n";
  for (const auto& c : r->choices) {
    std::cout << "  " << c.steps.front()
              << (c.steps.size() > 1 ? " (+" + std::to_string(c.steps.size() - 1) + " alike)" : "")
              << ":";
    std::string sep = " ";
    for (const auto& [candidate, us] : c.median_us) {
      std::cout << sep << candidate << " " << tools::FormatMs(us / 1e3) << " ms";
      sep = ", ";
    }
    std::cout << " -> " << c.choice
              << (c.choice == c.rule_choice ? " (as the rules)" : " (rules: " + c.rule_choice + ")")
              << "\n";
  }
  std::cout << std::fixed << std::setprecision(3) << "  " << r->changed << " of "
            << r->choices.size() << " choice(s) differ from the static rules; whole run: rules "
            << r->rule_ms << " ms, tuned " << r->tuned_ms << " ms (" << std::setprecision(2)
            << ratio << "x)\n";
  std::cout << "wrote " << a.output << " (use it: ortc compile ... --tuning-cache " << a.output
            << ")\n";
  return kExitOk;
}

}  // namespace

void AddTuneCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<TuneArgs>();
  auto* cmd = app.add_subcommand(
      "tune", "Measure a model's implementation choices on this GPU and write a tuning cache");
  cmd->add_option("model", a->model, "Source ONNX model")->required();
  cmd->add_option("-o,--output", a->output, "The tuning cache to write (JSON)")->required();
  cmd->add_option("--backend", a->backend, "Backend whose choices are measured")
      ->default_val("cuda")
      ->check(CLI::IsMember({"cuda"}));
  cmd->add_option("--input-shape,--shape", a->shapes,
                  "Fix a graph input's shape, as name=1x3x224x224 (repeatable), as for compile: "
                  "the cache's keys are the shapes measured");
  cmd->add_option("--input-value", a->values, "Fix a scalar input's value, as for compile");
  cmd->add_option("--precision", a->precision, "fp32, tf32, fp16 or bf16, as for compile")
      ->check(CLI::IsMember({"fp32", "tf32", "fp16", "bf16"}));
  cmd->add_option("--provider-option", a->provider_options,
                  "Backend option, as backend:key=value (repeatable), as for compile");
  cmd->add_option("--runs", a->runs, "Timed runs per compiled variant")
      ->default_val(20)
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--warmup", a->warmup, "Untimed runs before them")
      ->default_val(3)
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--seed", a->seed, "Seed of the random inputs");
  cmd->add_flag("--json", a->json, "Print a JSON report");
  cmd->add_flag("-q,--quiet", a->quiet, "Print nothing on success");
  cmd->footer(
      "Compiles the model once per candidate of every tunable choice (today: a generated kernel\n"
      "or a cuDNN call for each depthwise or grouped convolution), times every step on this\n"
      "GPU and keeps the fastest candidate per step kind, keyed by what the step computes. The\n"
      "cache names this GPU's architecture and cuDNN version; a compile for another is told so\n"
      "and ignores it.\n\n"
      "Examples:\n"
      "  ortc tune mobilenet.onnx --precision fp16 -o sm90.tuning.json\n"
      "  ortc compile mobilenet.onnx --ep cuda,cpu --precision fp16 --target-arch sm_90 \\\n"
      "      --tuning-cache sm90.tuning.json\n\n" +
      std::string(kExitCodeHelp));
  cmd->callback([a, exit_code] { *exit_code = Run(*a); });
}

}  // namespace ortc::cli
