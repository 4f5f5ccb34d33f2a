// The two ways a ConvCall runs, shared by conv_call.cpp (which picks one), conv_graph_api.cpp
// (one cuDNN execution plan for conv + residual + bias + activation) and conv_legacy.cpp (the
// legacy descriptor calls, kept for ConvTranspose and for graphs no engine accepts).
#pragma once

#include <string>
#include <vector>

#include "library_calls.h"

namespace ortc::cuda_rt {

struct LegacyConv {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, z = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnActivationDescriptor_t act = nullptr;   // the fused call's: Relu or identity
  cudnnActivationDescriptor_t clip = nullptr;  // Clip: clipped ReLU applied after the call
  cudnnConvolutionFwdAlgo_t fwd_algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
  cudnnConvolutionBwdDataAlgo_t bwd_algo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
  size_t workspace = 0;
  bool transposed = false, relu = false, has_z = false;
  float alpha = 1, alpha2 = 0;
  CUdeviceptr px = 0, pw = 0, pb = 0, pz = 0, py = 0;
};

// Every descriptor the execution plan was built from stays alive with it.
struct GraphConv {
  std::vector<cudnnBackendDescriptor_t> keep;
  cudnnBackendDescriptor_t plan = nullptr, pack = nullptr;
};

struct ConvPlan {
  bool graph_api = false;
  std::string fallback_reason;
  GraphConv graph;
  LegacyConv legacy;
};

// Helpers of both paths (conv_call.cpp).
bool CudnnDataType(int onnx, cudnnDataType_t* out);
// Dims of a call in logical N, C, spatial order, with unit spatial dims appended up to 4-D
// (cuDNN's minimum: a 1-D convolution runs as 2-D with width 1).
std::vector<int64_t> ConvDims4(const flatbuffers::Vector<int64_t>* v);
// Spatial attributes (pads, strides, dilations) padded to the 4-D convolution's two dims.
std::vector<int64_t> ConvSpatial(const flatbuffers::Vector<int64_t>* v, size_t spatial,
                                 int64_t fill);

// Builds the execution plan and its variant pack; false with `why` when cuDNN offers no engine
// for the fused graph within the workspace and precision rules (the caller falls back).
bool PlanConvGraph(const LibraryContext& lib, const fbc::ConvCall& c, BufferLookup buffers,
                   GraphConv* out, std::string* why);
void ReleaseGraphConv(GraphConv* g);

OrtcPluginStatus PlanConvLegacy(const LibraryContext& lib, const fbc::ConvCall& c,
                                BufferLookup buffers, LegacyConv* out);
OrtcPluginStatus RunConvLegacy(const LegacyConv& p, const LibraryContext& lib);
void ReleaseLegacyConv(LegacyConv* p);

}  // namespace ortc::cuda_rt
