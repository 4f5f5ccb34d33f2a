// A one-line progress display on a terminal (stderr) for compile and run; silent when not a
// terminal, in CI, or when asked to be quiet.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace ortc::cli {

class Progress {
 public:
  explicit Progress(bool enabled);
  ~Progress();
  // What done and total count: bytes ("9.0 MiB / 417.8 MiB (2%)") or runs ("37 / 200 runs").
  enum class Unit { kBytes, kRuns };
  void Update(const std::string& phase, int64_t done, int64_t total, Unit unit = Unit::kBytes);
  void Finish();

 private:
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_{};
  std::string phase_;
};

// True when stderr is a terminal and the CI variable is not set.
bool InteractiveTerminal();

}  // namespace ortc::cli
