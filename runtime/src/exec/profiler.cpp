// Collecting trace events and writing them in the Chrome trace format.
#include "exec/profiler.h"

#include "base/atomic_write.h"

#include <unistd.h>

#include <fstream>

#include <nlohmann/json.hpp>

namespace ortc::exec {

double Profiler::NowUs() const {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - epoch_)
      .count();
}

void Profiler::Add(TraceEvent e) {
  std::lock_guard<std::mutex> lock(mu_);
  events_.push_back(std::move(e));
}

Status Profiler::WriteAndClear(const std::filesystem::path& path) {
  std::vector<TraceEvent> events;
  {
    std::lock_guard<std::mutex> lock(mu_);
    events.swap(events_);
  }
  const int pid = static_cast<int>(::getpid());
  nlohmann::json trace = nlohmann::json::array();
  const char* lanes[] = {"run", "backend host (issue)", "backend device"};
  for (int t = 0; t < 3; ++t)
    trace.push_back({{"ph", "M"},
                     {"name", "thread_name"},
                     {"pid", pid},
                     {"tid", t},
                     {"args", {{"name", lanes[t]}}}});
  for (const auto& e : events) {
    nlohmann::json args = nlohmann::json::object();
    for (const auto& [k, v] : e.args) args[k] = v;
    trace.push_back({{"ph", "X"},
                     {"name", e.name},
                     {"cat", e.cat},
                     {"ts", e.ts_us},
                     {"dur", e.dur_us},
                     {"pid", pid},
                     {"tid", static_cast<int>(e.lane)},
                     {"args", args}});
  }
  // Whole or absent: a full disk must not leave a partial trace at the final path.
  const std::string text = trace.dump(1) + "\n";
  return format::WriteFileAtomically(path, [&](std::ostream& out) {
    out << text;
    return static_cast<bool>(out);
  });
}

}  // namespace ortc::exec
