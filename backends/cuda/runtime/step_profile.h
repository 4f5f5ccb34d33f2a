// Per-step timing of a graph instance's runs (enable_profiling): an event on the stream and a
// host clock reading between consecutive steps, so each step gets the host time its issue took
// and the device time between its events. The result is the JSON of last_run_profile.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "device_info.h"

namespace ortc::cuda_rt {

class StepProfile {
 public:
  StepProfile() = default;
  ~StepProfile();
  StepProfile(const StepProfile&) = delete;
  StepProfile& operator=(const StepProfile&) = delete;

  // One entry per timed span, in run order (name, kind); creates the events (spans + 1).
  OrtcPluginStatus Init(std::vector<std::pair<std::string, std::string>> spans);
  // Mark i is the start of span i (and the end of span i - 1); the last mark ends the last span.
  OrtcPluginStatus Mark(size_t i, CUstream stream);
  // After the stream synchronised: device times from the events, kept as the last run's JSON.
  OrtcPluginStatus Collect();
  const std::string& json() const { return json_; }
  void Reset();  // destroys the events (with the context current)

 private:
  using Clock = std::chrono::steady_clock;
  std::vector<std::pair<std::string, std::string>> spans_;
  std::vector<CUevent> events_;
  std::vector<Clock::time_point> host_;
  std::string json_ = "[]";
};

}  // namespace ortc::cuda_rt
