// Events and host clock readings per step, turned into JSON after the run.
#include "step_profile.h"

#include <nlohmann/json.hpp>

namespace ortc::cuda_rt {

StepProfile::~StepProfile() {
  Reset();
}

void StepProfile::Reset() {
  for (CUevent e : events_) {
    if (e) Driver().cuEventDestroy(e);
  }
  events_.clear();
}

OrtcPluginStatus StepProfile::Init(std::vector<std::pair<std::string, std::string>> spans) {
  spans_ = std::move(spans);
  events_.assign(spans_.size() + 1, nullptr);
  host_.assign(spans_.size() + 1, Clock::time_point{});
  for (auto& e : events_) ORTC_CU(Driver().cuEventCreate(&e, CU_EVENT_DEFAULT));
  return ORTC_PLUGIN_OK;
}

OrtcPluginStatus StepProfile::Mark(size_t i, CUstream stream) {
  host_[i] = Clock::now();
  ORTC_CU(Driver().cuEventRecord(events_[i], stream));
  return ORTC_PLUGIN_OK;
}

OrtcPluginStatus StepProfile::Collect() {
  auto us = [&](size_t a, size_t b) {
    return std::chrono::duration<double, std::micro>(host_[b] - host_[a]).count();
  };
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < spans_.size(); ++i) {
    float start_ms = 0, dur_ms = 0;
    ORTC_CU(Driver().cuEventElapsedTime(&start_ms, events_[0], events_[i]));
    ORTC_CU(Driver().cuEventElapsedTime(&dur_ms, events_[i], events_[i + 1]));
    out.push_back({{"name", spans_[i].first},
                   {"kind", spans_[i].second},
                   {"host_start_us", us(0, i)},
                   {"host_us", us(i, i + 1)},
                   {"device_start_us", start_ms * 1e3},
                   {"device_us", dur_ms * 1e3}});
  }
  json_ = out.dump();
  return ORTC_PLUGIN_OK;
}

}  // namespace ortc::cuda_rt
