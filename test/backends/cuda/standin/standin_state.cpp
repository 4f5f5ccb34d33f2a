// The stand-in's record, object counts, device allocations and fault injection, exported through
// standin_api.h to tests and to the cuDNN / cuBLASLt stand-ins.
#include "standin_state.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "standin_api.h"

namespace ortc::standin {

State& Global() {
  static State* s = new State();  // never destroyed: plugin destructors may run after main
  return *s;
}

void Counters::Add(const char* a, const char* b, const char* c, long delta) {
  char name[128];
  std::snprintf(name, sizeof(name), "%s%s%s", a, b, c);
  for (size_t i = 0; i < n_; ++i) {
    if (std::strcmp(entries_[i].name, name) == 0) {
      entries_[i].value += delta;
      return;
    }
  }
  if (n_ == sizeof(entries_) / sizeof(entries_[0])) return;
  std::memcpy(entries_[n_].name, name, sizeof(name));
  entries_[n_++].value = delta;
}

long Counters::Get(const char* name) const {
  for (size_t i = 0; i < n_; ++i) {
    if (std::strcmp(entries_[i].name, name) == 0) return entries_[i].value;
  }
  return 0;
}

namespace {

void RecordLocked(State& s, const char* a, const char* b) {
  s.counts.Add(a, b, "", 1);
  const size_t la = std::strlen(a), lb = std::strlen(b);
  if (s.trace_len + la + lb + 1 >= sizeof(s.trace)) return;
  std::memcpy(s.trace + s.trace_len, a, la);
  std::memcpy(s.trace + s.trace_len + la, b, lb);
  s.trace_len += la + lb;
  s.trace[s.trace_len++] = '\n';
}

bool InDevice(State& s, uintptr_t p, size_t bytes) {
  auto it = s.device_allocs.upper_bound(p);
  if (it == s.device_allocs.begin()) return false;
  --it;
  return p >= it->first && p + bytes <= it->first + it->second;
}

}  // namespace

void Record(const char* a, const char* b) {
  State& s = Global();
  std::lock_guard<std::mutex> lock(s.mu);
  RecordLocked(s, a, b);
}

bool ExecuteTransfer(Node::Kind kind, const char* direction, uintptr_t dst, uintptr_t src,
                     size_t bytes, unsigned char value) {
  State& s = Global();
  std::lock_guard<std::mutex> lock(s.mu);
  if (kind == Node::kMemset) {
    if (!InDevice(s, dst, bytes)) {
      s.counts.Add("error:memset outside device memory", "", "", 1);
      return false;
    }
    std::memset(reinterpret_cast<void*>(dst), value, bytes);
    return true;
  }
  // Host addresses are not checked (pageable or pinned); device ones must be allocated.
  // "HtoD", "DtoH", "DtoD", possibly with a suffix (":sync" for the synchronous upload).
  const bool dst_dev = std::strncmp(direction, "DtoH", 4) != 0;
  const bool src_dev = std::strncmp(direction, "HtoD", 4) != 0;
  if ((dst_dev && !InDevice(s, dst, bytes)) || (src_dev && !InDevice(s, src, bytes))) {
    s.counts.Add("error:copy outside device memory ", direction, "", 1);
    return false;
  }
  if (bytes) std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<void*>(src), bytes);
  // The bytes each direction moved ("bytes:HtoD"; weights go up synchronously at load,
  // "bytes:HtoD:sync"), so tests can say what crossed the bus.
  s.counts.Add("bytes:", direction, "", static_cast<long>(bytes));
  return true;
}

namespace {

// ORTC_STANDIN_WORK_US="cuLaunchKernel=40,cudnn=5": the microseconds a work node whose name
// starts with each prefix takes (the first match; unlisted work takes none), so that timing
// code sees work of known cost. Read once.
struct WorkCost {
  char prefix[64];
  double us;
};
struct WorkCosts {
  WorkCost entries[16];
  size_t n = 0;
};
const WorkCosts& Costs() {
  static const WorkCosts costs = [] {
    WorkCosts c;
    const char* env = std::getenv("ORTC_STANDIN_WORK_US");
    for (const char* p = env; p && *p && c.n < 16;) {
      const char* end = std::strchr(p, ',');
      const size_t len = end ? static_cast<size_t>(end - p) : std::strlen(p);
      const char* eq = static_cast<const char*>(std::memchr(p, '=', len));
      if (eq && static_cast<size_t>(eq - p) < sizeof(c.entries[0].prefix)) {
        WorkCost& w = c.entries[c.n++];
        std::memcpy(w.prefix, p, static_cast<size_t>(eq - p));
        w.prefix[eq - p] = '\0';
        w.us = std::atof(eq + 1);
      }
      p = end ? end + 1 : nullptr;
    }
    return c;
  }();
  return costs;
}

double CostMs(const char* a) {
  const WorkCosts& c = Costs();
  for (size_t i = 0; i < c.n; ++i) {
    if (std::strncmp(a, c.entries[i].prefix, std::strlen(c.entries[i].prefix)) == 0)
      return c.entries[i].us / 1000.0;
  }
  return 0;
}

}  // namespace

void CountWork(const char* prefix, const char* a, const char* b) {
  State& s = Global();
  std::lock_guard<std::mutex> lock(s.mu);
  s.counts.Add(prefix, a, b, 1);
  s.simulated_ms += CostMs(a);
}

double DeviceClockMs() {
  const double host =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
  State& s = Global();
  std::lock_guard<std::mutex> lock(s.mu);
  return host + s.simulated_ms;
}

bool CaptureForbids(const char* call) {
  State& s = Global();
  std::lock_guard<std::mutex> lock(s.mu);
  bool forbidden = false;
  for (auto& [handle, stream] : s.streams) {
    if (!stream->capturing || stream->mode == CU_STREAM_CAPTURE_MODE_RELAXED) continue;
    if (stream->mode == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
        stream->capture_thread != std::this_thread::get_id())
      continue;
    stream->invalidated = true;
    forbidden = true;
  }
  if (forbidden) RecordLocked(s, "error:during capture:", call);
  return forbidden;
}

}  // namespace ortc::standin

namespace {

// With ORTC_STANDIN_REPORT=path, the counts are written there when the process ends, as one
// JSON object ({"cuGraphLaunch": 32, "bytes:HtoD": 1234, ...}): how tests that drive a whole
// ortc command (not a test process of their own) read what it did.
__attribute__((destructor)) void WriteReportAtExit() {
  const char* path = std::getenv("ORTC_STANDIN_REPORT");
  if (!path || !*path) return;
  ortc::standin::State& s = ortc::standin::Global();
  std::lock_guard<std::mutex> lock(s.mu);
  FILE* f = std::fopen(path, "w");
  if (!f) return;
  std::fputs("{", f);
  s.counts.ForEach([&, first = true](const char* name, long value) mutable {
    std::fprintf(f, "%s\"%s\": %ld", first ? "" : ", ", name, value);
    first = false;
  });
  std::fputs("}\n", f);
  std::fclose(f);
}

}  // namespace

using ortc::standin::Global;

extern "C" {

void ortc_standin_reset(void) {
  auto& s = Global();
  std::lock_guard<std::mutex> lock(s.mu);
  s.counts.Clear();
  s.trace_len = 0;
}

void ortc_standin_record(const char* call) {
  ortc::standin::Record(call);
}

size_t ortc_standin_count(const char* call) {
  auto& s = Global();
  std::lock_guard<std::mutex> lock(s.mu);
  return static_cast<size_t>(s.counts.Get(call));
}

const char* ortc_standin_trace(void) {
  static thread_local std::string copy;
  auto& s = Global();
  std::lock_guard<std::mutex> lock(s.mu);
  copy.assign(s.trace, s.trace_len);
  return copy.c_str();
}

int ortc_standin_fail(const char* call) {
  const char* env = std::getenv("ORTC_STANDIN_FAIL");
  if (!env) return 0;
  const size_t n = std::strlen(call);
  for (const char* p = env; *p;) {
    const char* end = std::strchr(p, ',');
    const size_t len = end ? static_cast<size_t>(end - p) : std::strlen(p);
    if (len == n && std::strncmp(p, call, n) == 0) return 1;
    if (!end) break;
    p = end + 1;
  }
  return 0;
}

int ortc_standin_is_device_range(const void* ptr, size_t bytes) {
  auto& s = Global();
  std::lock_guard<std::mutex> lock(s.mu);
  return ortc::standin::InDevice(s, reinterpret_cast<uintptr_t>(ptr), bytes) ? 1 : 0;
}

void ortc_standin_object(const char* kind, int delta) {
  auto& s = Global();
  std::lock_guard<std::mutex> lock(s.mu);
  s.live.Add(kind, "", "", delta);
}

long ortc_standin_live(const char* kind) {
  auto& s = Global();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.live.Get(kind);
}

size_t ortc_standin_live_device_bytes(void) {
  auto& s = Global();
  std::lock_guard<std::mutex> lock(s.mu);
  size_t total = 0;
  for (const auto& [base, bytes] : s.device_allocs) total += bytes;
  return total;
}

}  // extern "C"
