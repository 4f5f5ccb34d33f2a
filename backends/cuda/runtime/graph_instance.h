// One loaded CUDA program for one session. Everything a run needs is built at load: verified
// program, module and kernel functions, device arena / IO buffers / workspace, pinned host
// staging, shared weights, cuDNN and cuBLASLt plans bound to the instance's stream, and, unless
// disabled, a CUDA graph of all steps. A run is then: input copies, one graph launch (or the
// steps in order), output copies, one synchronisation. Runs are serialised on the instance.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_graph.h"
#include "device_memory.h"
#include "host_staging.h"
#include "load_options.h"
#include "step_profile.h"
#include "steps.h"

namespace ortc::cuda_rt {

class GraphInstance {
 public:
  static OrtcPluginStatus Load(const OrtcGraphLoadInfo& info, std::unique_ptr<GraphInstance>* out);
  ~GraphInstance();
  OrtcPluginStatus Run(const OrtcTensorRef* inputs, uint32_t num_inputs, OrtcTensorRef* outputs,
                       uint32_t num_outputs);
  // backends/README.md lists the keys: execution path and why, steps by kind, staging.
  std::string DescribeJson() const;
  // The last run's per-step profile; INVALID_ARGUMENT unless loaded with enable_profiling.
  OrtcPluginStatus LastRunProfile(std::string* json);

 private:
  GraphInstance() = default;
  OrtcPluginStatus ResolveBuffers(const OrtcGraphLoadInfo& info);
  OrtcPluginStatus LoadModule(const OrtcGraphLoadInfo& info);
  OrtcPluginStatus PlanSteps();
  OrtcPluginStatus PrepareExecution();
  OrtcPluginStatus CheckRunArguments(const OrtcTensorRef* inputs, uint32_t num_inputs,
                                     const OrtcTensorRef* outputs, uint32_t num_outputs) const;
  OrtcPluginStatus CopyInputs(const OrtcTensorRef* inputs);
  OrtcPluginStatus CopyOutputs(const OrtcTensorRef* outputs);
  void FinishHostOutputs(const OrtcTensorRef* outputs);
  OrtcPluginStatus Execute();
  OrtcPluginStatus ExecuteProfiled(const OrtcTensorRef* inputs, const OrtcTensorRef* outputs);

  std::string name_, content_id_;
  LoadOptions options_;
  const fbc::Program* program_ = nullptr;  // in the host's mapped binary (kept by the host)
  const DeviceContext* dev_ = nullptr;
  CUstream stream_ = nullptr;
  LibraryContext lib_;
  std::shared_ptr<DeviceBuffer> arena_, io_, workspace_;
  std::vector<std::shared_ptr<DeviceBuffer>> weights_;
  std::shared_ptr<LoadedModule> module_;
  std::vector<BufferView> buffers_;
  std::vector<int> inputs_, outputs_;                 // buffer per input / output
  std::vector<uint64_t> input_stage_, output_stage_;  // offsets in staging_
  HostStaging staging_;
  std::string staging_reason_;  // why copies use the caller's memory
  std::vector<Step> steps_;
  CapturedGraph graph_;
  std::string stream_reason_;  // why runs issue the steps instead of launching a graph
  StepProfile profile_;
  std::mutex mu_;
};

}  // namespace ortc::cuda_rt
