// Tuning by measurement (tune_driver.h).
#include "tune/tune_driver.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <random>
#include <sstream>

#include "io/feeds.h"
#include "ortc/runtime.h"
#include "registry.h"

namespace ortc::tune {
namespace {

namespace fs = std::filesystem;

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// A folder removed with everything in it when the tune ends.
struct WorkDir {
  fs::path path;
  WorkDir() {
    std::random_device rd;
    path = fs::temp_directory_path() / ("ortc-tune-" + std::to_string(rd()));
    fs::create_directories(path);
  }
  ~WorkDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

struct Compiled {
  fs::path ctx;
  std::vector<compile::CompileReport::Choice> choices;
};

Result<Compiled> CompileVariant(const TuneOptions& o, const backends::ProviderOptions& extra,
                                const fs::path& dir) {
  compile::CompileOptions c = o.compile;
  c.more_models.clear();
  c.shape_profiles.clear();
  c.if_changed = false;
  c.progress = nullptr;
  c.output = dir / "model_ctx.onnx";
  for (const auto& [k, v] : extra) c.provider_options[o.backend][k] = v;
  fs::create_directories(dir);
  auto r = compile::Compile(c);
  if (!r.ok()) return r.status();
  for (const auto& b : r->backends) {
    if (b.name == o.backend && b.groups == 0)
      return NotImplemented("backend " + o.backend + " took no node of the model: nothing to tune");
  }
  return Compiled{c.output, r->choices};
}

struct Timing {
  // Per "graph/step": device microseconds of each timed run.
  std::map<std::string, std::vector<double>> step_us;
  double run_ms = 0;  // median whole run, host clock
};

// Runs a compiled model with profiling: warm-up runs (their events dropped), then timed runs;
// reads each step's device time from the trace's backend-device lane.
Result<Timing> Measure(const TuneOptions& o, const fs::path& ctx, const fs::path& trace) {
  SessionOptions so;
  so.enable_profiling = true;
  auto session = Session::Create(ctx, so);
  if (!session.ok()) return session.status();
  auto feeds = io::MakeFeeds((*session)->inputs(), {}, o.shapes, o.seed);
  if (!feeds.ok()) return feeds.status();
  for (int i = 0; i < o.warmup; ++i) {
    auto r = (*session)->Run(*feeds);
    if (!r.ok()) return r.status();
  }
  ORTC_RETURN_IF_ERROR((*session)->EndProfiling(trace));  // drops the warm-up events
  Timing t;
  std::vector<double> runs;
  for (int i = 0; i < o.runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto r = (*session)->Run(*feeds);
    if (!r.ok()) return r.status();
    runs.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  t.run_ms = Median(runs);
  ORTC_RETURN_IF_ERROR((*session)->EndProfiling(trace));
  std::ifstream in(trace);
  std::stringstream text;
  text << in.rdbuf();
  const auto events = nlohmann::json::parse(text.str(), nullptr, false);
  if (!events.is_array()) return InvalidGraph("the run's profile is not a JSON array");
  constexpr int kDeviceLane = 2;  // exec::TraceLane::kBackendDevice
  for (const auto& e : events) {
    if (e.value("cat", "") != "Step" || e.value("tid", -1) != kDeviceLane) continue;
    const std::string graph = e.contains("args") ? e["args"].value("graph", "") : "";
    t.step_us[graph + "/" + e.value("name", "")].push_back(e.value("dur", 0.0));
  }
  return t;
}

}  // namespace

Result<TuneReport> Tune(const TuneOptions& o) {
  const auto* backend = backends::FindBackend(o.backend);
  if (!backend) return InvalidArgument("unknown backend '" + o.backend + "'");
  const auto variants = backend->TuningVariants();
  if (variants.empty()) return NotImplemented("backend " + o.backend + " has nothing to tune");
  if (o.runs < 1) return InvalidArgument("--runs must be at least 1");
  const DeviceDescription device = DeviceDescription::Detect();
  if (o.backend == "cuda" && (device.cuda_driver_version == 0 || device.cuda_archs.empty()))
    return Status(StatusCode::kEpFail,
                  "ortc tune measures on the GPU it runs on, and finds none here (" +
                      device.cuda_unavailable_reason +
                      "); run it on the machine the bundle is for");
  auto say = [&](const std::string& s) {
    if (o.progress) o.progress(s);
  };
  TuneOptions opts = o;
  // Cubins for this device only (the cache is keyed by it), no cache of an earlier tune.
  auto& bo = opts.compile.provider_options[o.backend];
  bo.erase("tuning_cache");
  bo.erase("grouped_conv");
  if (o.backend == "cuda") bo["target_arch"] = device.cuda_archs[0];

  WorkDir work;
  TuneReport report;
  // The rules' choices and whole-run time: the baseline every measured choice is against.
  say("compiling with the static rules");
  auto rule = CompileVariant(opts, {}, work.path / "rule");
  if (!rule.ok()) return rule.status();
  if (rule->choices.empty())
    return NotImplemented(
        "the model has no step with a choice to measure (today: grouped "
        "convolutions on CUDA)");
  say("timing the static rules' choices");
  auto rule_time = Measure(opts, rule->ctx, work.path / "rule.json");
  if (!rule_time.ok()) return rule_time.status();
  report.rule_ms = rule_time->run_ms;

  std::map<std::string, MeasuredChoice> by_key;
  for (const auto& c : rule->choices) {
    auto& m = by_key[c.choice.key];
    m.key = c.choice.key;
    m.rule_choice = c.choice.choice;
    m.steps.push_back(c.graph + "/" + c.choice.step);
  }
  // Per key and candidate: every timed run of every step computing it.
  std::map<std::string, std::map<std::string, std::vector<double>>> samples;
  for (size_t i = 0; i < variants.size(); ++i) {
    const fs::path dir = work.path / ("variant" + std::to_string(i));
    say("compiling variant " + std::to_string(i + 1) + " of " + std::to_string(variants.size()));
    auto v = CompileVariant(opts, variants[i], dir);
    if (!v.ok()) return v.status();
    say("timing variant " + std::to_string(i + 1));
    auto t = Measure(opts, v->ctx, dir / "trace.json");
    if (!t.ok()) return t.status();
    for (const auto& c : v->choices) {
      auto it = t->step_us.find(c.graph + "/" + c.choice.step);
      if (it == t->step_us.end()) continue;
      auto& s = samples[c.choice.key][c.choice.choice];
      s.insert(s.end(), it->second.begin(), it->second.end());
    }
  }
  report.cache.backend = o.backend;
  report.cache.made_by = o.compile.compiler;
  if (o.backend == "cuda") {
    report.cache.device = {{"arch", device.cuda_archs[0]},
                           {"cudnn", device.cudnn_version},
                           {"cublas", device.cublas_version},
                           {"driver", std::to_string(device.cuda_driver_version)}};
  }
  for (auto& [key, m] : by_key) {
    const auto& per = samples[key];
    for (const auto& [candidate, us] : per) m.median_us[candidate] = Median(us);
    // A key needs every candidate timed; otherwise the rules keep deciding it.
    if (m.median_us.size() < 2) continue;
    m.choice =
        std::min_element(m.median_us.begin(), m.median_us.end(), [](const auto& a, const auto& b) {
          return a.second < b.second;
        })->first;
    report.changed += m.choice != m.rule_choice;
    report.cache.entries.push_back(
        {key, m.choice, m.median_us, static_cast<int>(per.begin()->second.size())});
    report.choices.push_back(m);
  }
  if (report.cache.entries.empty())
    return InvalidGraph(
        "no step of a tunable choice appeared in the run profiles: nothing was "
        "measured");
  // The model with the new cache, timed the same way: what the cache buys as a whole.
  const fs::path cache_path = work.path / "cache.json";
  {
    std::ofstream out(cache_path);
    out << backends::TuningCacheJson(report.cache);
  }
  say("timing the tuned choices");
  auto tuned = CompileVariant(opts, {{"tuning_cache", cache_path.string()}}, work.path / "tuned");
  if (!tuned.ok()) return tuned.status();
  auto tuned_time = Measure(opts, tuned->ctx, work.path / "tuned.json");
  if (!tuned_time.ok()) return tuned_time.status();
  report.tuned_ms = tuned_time->run_ms;
  return report;
}

}  // namespace ortc::tune
