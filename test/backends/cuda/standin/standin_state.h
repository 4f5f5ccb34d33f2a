// Shared state of the stand-in driver: the call record, device allocations (host memory standing
// in for device memory), streams with their capture state, and recorded graphs. Recording and
// executing never allocate heap memory (fixed tables), so a test can count the allocations the
// plugin itself makes during a run.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ortc::standin {

// One operation of a stream, done at once or recorded into a graph while capturing.
struct Node {
  enum Kind { kCopy, kMemset, kWork } kind = kWork;
  uintptr_t dst = 0, src = 0;
  size_t bytes = 0;
  unsigned char value = 0;
  std::string what;  // kCopy: "HtoD"/"DtoH"/"DtoD"; kWork: "cuLaunchKernel:<name>"...
};

struct Graph {
  std::vector<Node> nodes;
};

struct Stream {
  bool capturing = false;
  bool invalidated = false;  // a call that is illegal during capture happened on this thread
  std::thread::id capture_thread;
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
  Graph* graph = nullptr;
};

// Named counters in a fixed table (names up to 127 characters).
class Counters {
 public:
  void Add(const char* a, const char* b, const char* c, long delta);  // the name is a+b+c
  long Get(const char* name) const;
  void Clear() { n_ = 0; }
  template <typename F>
  void ForEach(F&& f) const {
    for (size_t i = 0; i < n_; ++i) f(entries_[i].name, entries_[i].value);
  }

 private:
  struct Entry {
    char name[128];
    long value;
  };
  Entry entries_[1024];
  size_t n_ = 0;
};

struct State {
  std::mutex mu;
  Counters counts;  // calls since the last reset
  Counters live;    // live objects by kind
  char trace[8 << 20];
  size_t trace_len = 0;
  std::map<uintptr_t, size_t> device_allocs;  // base -> bytes
  std::map<CUstream, Stream*> streams;
  // Simulated device time (ms): every executed work node advances it by its cost
  // (ORTC_STANDIN_WORK_US), and events read the host clock plus it.
  double simulated_ms = 0;
};

State& Global();

// Counts a+b and appends it to the trace (without allocating).
void Record(const char* a, const char* b = "");

// Executes a copy or memset now on host memory; false when a device range is not inside a live
// allocation.
bool ExecuteTransfer(Node::Kind kind, const char* direction, uintptr_t dst, uintptr_t src,
                     size_t bytes, unsigned char value);
// Counts a node's execution: "exec:<a><b>" when issued outside a capture, "replay:<a><b>" when a
// graph launch replays it; advances simulated_ms by the work's cost.
void CountWork(const char* prefix, const char* a, const char* b);
// Host clock plus simulated device time, in ms (what events record).
double DeviceClockMs();

// True when a stream captured by the calling thread forbids an unsafe call (allocation,
// synchronisation): the capture is then invalidated, as the real driver does.
bool CaptureForbids(const char* call);

}  // namespace ortc::standin
