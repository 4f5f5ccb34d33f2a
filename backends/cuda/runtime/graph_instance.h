// One loaded CUDA program for one session: verified program, chosen module and kernels,
// device arena / IO staging / workspace, shared weights, library plans, its own stream.
// Runs are serialised on the instance.
#pragma once

#include <memory>
#include <mutex>
#include <variant>
#include <vector>

#include "device_memory.h"
#include "library_calls.h"

namespace ortc::cuda_rt {

class GraphInstance {
 public:
  static OrtcPluginStatus Load(const OrtcGraphLoadInfo& info, std::unique_ptr<GraphInstance>* out);
  ~GraphInstance();
  OrtcPluginStatus Run(const OrtcTensorRef* inputs, uint32_t num_inputs, OrtcTensorRef* outputs,
                       uint32_t num_outputs);

 private:
  struct Launch {
    CUfunction fn = nullptr;
    unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
    unsigned shared = 0;
    std::vector<CUdeviceptr> args;  // fixed at load: every buffer has a fixed address
  };
  struct CopyStep {
    CUdeviceptr src = 0, dst = 0;
    uint64_t bytes = 0;
  };
  struct Step {
    std::string name;
    std::variant<std::monostate, Launch, ConvPlanPtr, GemmPlanPtr, CopyStep> what;
  };

  GraphInstance() = default;
  OrtcPluginStatus ResolveBuffers(const OrtcGraphLoadInfo& info);
  OrtcPluginStatus LoadModule(const OrtcGraphLoadInfo& info);
  OrtcPluginStatus PlanSteps();

  std::string name_, content_id_;
  const fbc::Program* program_ = nullptr;  // in the host's mapped binary (kept by the host)
  const DeviceContext* dev_ = nullptr;
  CUstream stream_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  cublasLtHandle_t cublas_ = nullptr;
  std::shared_ptr<DeviceBuffer> arena_, io_, workspace_;
  std::vector<std::shared_ptr<DeviceBuffer>> weights_;
  std::shared_ptr<LoadedModule> module_;
  std::vector<BufferView> buffers_;
  std::vector<int> inputs_, outputs_;  // buffer per input / output
  std::vector<Step> steps_;
  std::mutex mu_;
};

}  // namespace ortc::cuda_rt
