// A session's profile: one event per run, per node and per backend step (host issue and device
// execution), written as a Chrome trace (the JSON array of "X" events ONNX Runtime's profiler
// also writes; chrome://tracing and Perfetto read it).
#pragma once

#include <chrono>
#include <filesystem>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "ortc/status.h"

namespace ortc::exec {

// Threads of the trace: the run itself, a backend's host-side issue, its device timeline.
enum class TraceLane { kRun = 0, kBackendHost = 1, kBackendDevice = 2 };

struct TraceEvent {
  std::string name;
  std::string cat;  // "Session" (a run), "Node", "Step" (inside a backend graph)
  double ts_us = 0, dur_us = 0;
  TraceLane lane = TraceLane::kRun;
  std::vector<std::pair<std::string, std::string>> args;
};

class Profiler {
 public:
  Profiler() : epoch_(std::chrono::steady_clock::now()) {}
  // Microseconds since the profiler started (the session was created).
  double NowUs() const;
  void Add(TraceEvent e);
  // Writes every event since the last write as a Chrome trace, then forgets them.
  Status WriteAndClear(const std::filesystem::path& path);

 private:
  std::chrono::steady_clock::time_point epoch_;
  std::mutex mu_;
  std::vector<TraceEvent> events_;
};

}  // namespace ortc::exec
