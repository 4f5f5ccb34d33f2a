// One loaded CUDA program for one session. Everything a run needs is built at load: verified
// program, module and kernel functions, device arena / IO buffers / workspace, pinned host
// staging, shared weights, cuDNN and cuBLASLt plans bound to the instance's stream, and, unless
// disabled, a CUDA graph of all steps. A run is then: input copies, one graph launch (or the
// steps in order), output copies, one synchronisation. Runs are serialised on the instance.
// Device-resident inputs and outputs (a KV cache between generation steps) are bound in place
// of the graph's own IO buffers where io_binding.h allows: the steps are planned and captured
// once more against those addresses (a few bindings kept), and the run copies none of them.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_graph.h"
#include "device_memory.h"
#include "host_copy.h"
#include "host_staging.h"
#include "io_binding.h"
#include "load_options.h"
#include "output_pipeline.h"
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
  // The program's steps against `buffers` (the instance's own, or a binding's).
  OrtcPluginStatus PlanSteps(const std::vector<BufferView>& buffers, std::vector<Step>* steps);
  OrtcPluginStatus PrepareExecution();
  // The steps (and their graph) for a binding of device-resident IO: found, or planned and
  // captured now.
  struct BoundVariant {
    IoBinding binding;
    std::vector<Step> steps;
    CapturedGraph graph;
  };
  OrtcPluginStatus VariantFor(const IoBinding& binding, BoundVariant** out);
  // The run's binding in bound_run_ (empty when no input or output is in device memory).
  void ChooseRunBinding(const OrtcTensorRef* inputs, const OrtcTensorRef* outputs);
  OrtcPluginStatus ExecuteBound(const BoundVariant& v);
  OrtcPluginStatus CheckRunArguments(const OrtcTensorRef* inputs, uint32_t num_inputs,
                                     const OrtcTensorRef* outputs, uint32_t num_outputs) const;
  // Copies every input / output that `bound` (when given) does not bind.
  OrtcPluginStatus CopyInputs(const OrtcTensorRef* inputs, const IoBinding* bound = nullptr);
  OrtcPluginStatus CopyOutputs(const OrtcTensorRef* outputs, const IoBinding* bound = nullptr);
  OrtcPluginStatus DrainChunkedOutputs(const OrtcTensorRef* outputs);
  void FinishHostOutputs(const OrtcTensorRef* outputs);
  OrtcPluginStatus Execute();
  OrtcPluginStatus ExecuteProfiled(const OrtcTensorRef* inputs, const OrtcTensorRef* outputs);

  std::string name_, content_id_;
  LoadOptions options_;
  // Milliseconds of each part of this instance's load, reported by DescribeJson as load_ms:
  // what a load spends beyond the CUDA context is found part by part before it is cut.
  struct LoadTimes {
    double device = 0;   // the CUDA context: driver load, cuInit, primary context (first graph)
    double staging = 0;  // pinned host staging, host copy threads, device arena/IO/workspace
    double weights = 0;  // weight allocation and upload (a lookup where another session did it)
    double module = 0;   // the module's load (shared by the sessions of one binary)
    double plans = 0;    // kernel functions, cuDNN and cuBLASLt handles and plans
    double warmup = 0;   // the eager pass before capture (libraries' lazy set-up)
    double capture = 0;  // CUDA graph capture, instantiation and its first launch (upload)
  } load_ms_;
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
  std::string staging_reason_;                 // why copies use the caller's memory
  std::shared_ptr<HostCopyPool> host_copies_;  // staging <-> caller copies, split over threads
  OutputPipeline output_chunks_;               // large host outputs: chunked copies out
  std::vector<Step> steps_;
  CapturedGraph graph_;
  IoTouches io_touches_;
  // Per-run scratch, sized at load so that a run allocates nothing.
  IoBinding offered_, bound_run_;
  std::vector<uint64_t> offered_in_bytes_, offered_out_bytes_;
  std::vector<std::unique_ptr<BoundVariant>> variants_;  // oldest first
  std::string stream_reason_;  // why runs issue the steps instead of launching a graph
  StepProfile profile_;
  std::mutex mu_;
};

}  // namespace ortc::cuda_rt
