// cuDNN convolutions and cuBLASLt matrix products of a program, planned once at load against the
// graph instance's handles, stream and workspace (descriptors, engine or algorithm, fixed device
// pointers), then issued on that stream by each run without further lookups.
#pragma once

#include <memory>
#include <string>
#include <vector>

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

// What every plan of one graph instance is built against.
struct LibraryContext {
  cudnnHandle_t cudnn = nullptr;  // bound to `stream` once, at load
  cublasLtHandle_t cublas = nullptr;
  CUstream stream = nullptr;
  CUdeviceptr workspace = 0;
  uint64_t workspace_bytes = 0;  // the program's cap for any one call
  fbc::Precision precision = fbc::Precision::FP32;
};

// fp32 data may be rounded to TF32 on tensor cores only in programs compiled with
// --precision tf32; --precision fp32 means IEEE fp32 math in every library call.
inline bool AllowsTf32(fbc::Precision p) {
  return p == fbc::Precision::TF32;
}

OrtcPluginStatus PlanConv(const LibraryContext& lib, const fbc::ConvCall& call,
                          BufferLookup buffers, ConvPlanPtr* out);
OrtcPluginStatus RunConv(const ConvPlan& plan, const LibraryContext& lib);
// "graph_api" (one cuDNN execution plan, fused epilogue) or "legacy" (cuDNN's legacy calls).
const char* ConvPlanApi(const ConvPlan& plan);
// Why the graph API was not used ("" when it was).
const std::string& ConvPlanFallbackReason(const ConvPlan& plan);

OrtcPluginStatus PlanGemm(const LibraryContext& lib, const fbc::GemmCall& call,
                          BufferLookup buffers, GemmPlanPtr* out);
OrtcPluginStatus RunGemm(const GemmPlan& plan, const LibraryContext& lib);

}  // namespace ortc::cuda_rt
