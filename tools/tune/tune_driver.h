// `ortc tune` as a library call: on the machine with the GPU, compile a model once per tuning
// variant of a backend (each variant takes every tunable choice one way), time every step of each
// compiled variant through the runtime's profiler, and keep per choice key the fastest candidate:
// a tuning cache (backends/tuning_cache.h) for compiles on machines without that GPU.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "compile/compile_driver.h"
#include "tuning_cache.h"

namespace ortc::tune {

struct TuneOptions {
  // The model and the compile flags (--ep, --input-shape, --precision...); output is ignored.
  compile::CompileOptions compile;
  std::string backend = "cuda";     // the backend whose choices are measured
  std::vector<std::string> shapes;  // --input-shape texts, for the random feeds
  int warmup = 3, runs = 20;        // untimed and timed runs per variant
  uint64_t seed = 0;
  std::function<void(const std::string&)> progress;
};

struct MeasuredChoice {
  std::string key, rule_choice, choice;     // rule_choice: what the static rules take
  std::map<std::string, double> median_us;  // per candidate
  std::vector<std::string> steps;           // the steps (graph/step) computing this key
};

struct TuneReport {
  backends::TuningCache cache;
  std::vector<MeasuredChoice> choices;
  int changed = 0;  // keys whose fastest candidate is not the rule's
  // Whole-run medians (host, ms) of the model compiled by the rules and with the new cache.
  double rule_ms = 0, tuned_ms = 0;
};

// Fails when no device of the backend is usable here (tuning measures, it never guesses).
Result<TuneReport> Tune(const TuneOptions& options);

}  // namespace ortc::tune
