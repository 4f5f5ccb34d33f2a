// A CUDA graph of a graph instance's steps: captured once at load from the stream (thread-local
// capture mode, so other sessions of the process are not disturbed) and replayed by each run
// with one cuGraphLaunch.
#pragma once

#include <functional>
#include <string>

#include "device_info.h"

namespace ortc::cuda_rt {

class CapturedGraph {
 public:
  CapturedGraph() = default;
  ~CapturedGraph();
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;

  // Captures what `issue` puts on `stream`. On failure returns false with `why` (the failing call
  // and its error); the stream is then out of capture and usable for plain execution.
  bool Capture(CUstream stream, const std::function<OrtcPluginStatus()>& issue, std::string* why);
  void Reset();  // destroys the executable graph (with the context current)
  bool ready() const { return exec_ != nullptr; }
  CUgraphExec exec() const { return exec_; }

 private:
  CUgraphExec exec_ = nullptr;
};

}  // namespace ortc::cuda_rt
