// Stream capture into an instantiated CUDA graph, with every failure turned into a reason.
#include "cuda_graph.h"

namespace ortc::cuda_rt {

CapturedGraph::~CapturedGraph() {
  Reset();
}

void CapturedGraph::Reset() {
  if (exec_) Driver().cuGraphExecDestroy(exec_);
  exec_ = nullptr;
}

bool CapturedGraph::Capture(CUstream stream, const std::function<OrtcPluginStatus()>& issue,
                            std::string* why) {
  const auto& d = Driver();
  CUresult r = d.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
  if (r != CUDA_SUCCESS) {
    *why = CuText(r, "cuStreamBeginCapture");
    return false;
  }
  const OrtcPluginStatus issued = issue();
  const std::string issue_error = issued == ORTC_PLUGIN_OK ? "" : LastError();
  CUgraph graph = nullptr;
  r = d.cuStreamEndCapture(stream, &graph);  // always: it takes the stream out of capture
  if (issued != ORTC_PLUGIN_OK || r != CUDA_SUCCESS) {
    if (graph) d.cuGraphDestroy(graph);
    *why = issued != ORTC_PLUGIN_OK ? "a step cannot be captured: " + issue_error
                                    : CuText(r, "cuStreamEndCapture");
    return false;
  }
  r = d.cuGraphInstantiate(&exec_, graph, 0);
  d.cuGraphDestroy(graph);  // the executable graph keeps what it needs
  if (r != CUDA_SUCCESS) {
    exec_ = nullptr;
    *why = CuText(r, "cuGraphInstantiate");
    return false;
  }
  return true;
}

}  // namespace ortc::cuda_rt
