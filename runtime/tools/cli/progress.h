// A one-line progress display on a terminal (stderr); silent when not a terminal, in CI, or
// when asked to be quiet.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace ortc::cli {

class Progress {
 public:
  explicit Progress(bool enabled);
  ~Progress();
  void Update(const std::string& phase, int64_t done, int64_t total);
  void Finish();

 private:
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_{};
};

// True when stderr is a terminal and the CI variable is not set.
bool InteractiveTerminal();

}  // namespace ortc::cli
