// cuDNN convolutions and cuBLASLt matrix products of a program, planned at load (descriptors,
// algorithm from the libraries' heuristics, workspace) and run on the session's stream.
#pragma once

#include <memory>

#include "cuda_program_generated.h"
#include "plugin_error.h"

namespace ortc::cuda_rt {

namespace fbc = ortc::fb::cuda;

struct ConvPlan;
struct GemmPlan;
struct ConvPlanDeleter {
  void operator()(ConvPlan* p) const;
};
struct GemmPlanDeleter {
  void operator()(GemmPlan* p) const;
};
using ConvPlanPtr = std::unique_ptr<ConvPlan, ConvPlanDeleter>;
using GemmPlanPtr = std::unique_ptr<GemmPlan, GemmPlanDeleter>;

// Device address and element type of each buffer named by a call.
struct BufferView {
  CUdeviceptr ptr = 0;
  int dtype = 0;  // ONNX
  uint64_t byte_size = 0;
};
using BufferLookup = const std::vector<BufferView>&;

OrtcPluginStatus PlanConv(cudnnHandle_t handle, const fbc::ConvCall& call, BufferLookup buffers,
                          uint64_t workspace_bytes, ConvPlanPtr* out);
OrtcPluginStatus RunConv(const ConvPlan& plan, cudnnHandle_t handle, CUdeviceptr workspace,
                         CUstream stream);

OrtcPluginStatus PlanGemm(cublasLtHandle_t handle, const fbc::GemmCall& call, BufferLookup buffers,
                          uint64_t workspace_bytes, GemmPlanPtr* out);
OrtcPluginStatus RunGemm(const GemmPlan& plan, cublasLtHandle_t handle, CUdeviceptr workspace,
                         CUstream stream);

}  // namespace ortc::cuda_rt
