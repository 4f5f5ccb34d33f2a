// Symbol tables for the vendor libraries the plugin reaches through dlopen: the CUDA driver
// (libcuda.so.1), cuDNN 9 and cuBLASLt 13. Each entry is typed from the real header with
// decltype, so a signature mismatch is a compile error, and each table says what is missing.
#pragma once

#include <cublasLt.h>
#include <cuda.h>
#include <cudnn.h>

#include <string>

namespace ortc::cuda_rt {

// The header's own spelling of a name (cuMemAlloc is cuMemAlloc_v2): the exported symbol.
#define ORTC_CUDA_STR2(x) #x
#define ORTC_CUDA_STR(x) ORTC_CUDA_STR2(x)

#define ORTC_CUDA_DRIVER_SYMBOLS(X) \
  X(cuInit)                         \
  X(cuDriverGetVersion)             \
  X(cuDeviceGetCount)               \
  X(cuDeviceGet)                    \
  X(cuDeviceGetAttribute)           \
  X(cuDeviceGetName)                \
  X(cuDevicePrimaryCtxRetain)       \
  X(cuDevicePrimaryCtxRelease)      \
  X(cuCtxPushCurrent)               \
  X(cuCtxPopCurrent)                \
  X(cuModuleLoadDataEx)             \
  X(cuModuleUnload)                 \
  X(cuModuleGetFunction)            \
  X(cuLaunchKernel)                 \
  X(cuMemAlloc)                     \
  X(cuMemFree)                      \
  X(cuMemHostAlloc)                 \
  X(cuMemFreeHost)                  \
  X(cuMemcpyHtoD)                   \
  X(cuMemcpyHtoDAsync)              \
  X(cuMemcpyDtoHAsync)              \
  X(cuMemcpyDtoDAsync)              \
  X(cuMemcpy2DAsync)                \
  X(cuMemsetD8Async)                \
  X(cuStreamCreate)                 \
  X(cuStreamDestroy)                \
  X(cuStreamSynchronize)            \
  X(cuStreamBeginCapture)           \
  X(cuStreamEndCapture)             \
  X(cuGraphInstantiate)             \
  X(cuGraphLaunch)                  \
  X(cuGraphDestroy)                 \
  X(cuGraphExecDestroy)             \
  X(cuEventCreate)                  \
  X(cuEventRecord)                  \
  X(cuEventElapsedTime)             \
  X(cuEventSynchronize)             \
  X(cuEventDestroy)                 \
  X(cuGetErrorName)                 \
  X(cuGetErrorString)

#define ORTC_CUDNN_SYMBOLS(X)                     \
  X(cudnnGetVersion)                              \
  X(cudnnGetErrorString)                          \
  X(cudnnCreate)                                  \
  X(cudnnDestroy)                                 \
  X(cudnnSetStream)                               \
  X(cudnnCreateTensorDescriptor)                  \
  X(cudnnDestroyTensorDescriptor)                 \
  X(cudnnSetTensorNdDescriptorEx)                 \
  X(cudnnCreateFilterDescriptor)                  \
  X(cudnnDestroyFilterDescriptor)                 \
  X(cudnnSetFilterNdDescriptor)                   \
  X(cudnnCreateConvolutionDescriptor)             \
  X(cudnnDestroyConvolutionDescriptor)            \
  X(cudnnSetConvolutionNdDescriptor)              \
  X(cudnnSetConvolutionGroupCount)                \
  X(cudnnSetConvolutionMathType)                  \
  X(cudnnCreateActivationDescriptor)              \
  X(cudnnDestroyActivationDescriptor)             \
  X(cudnnSetActivationDescriptor)                 \
  X(cudnnGetConvolutionForwardAlgorithm_v7)       \
  X(cudnnGetConvolutionForwardWorkspaceSize)      \
  X(cudnnConvolutionForward)                      \
  X(cudnnConvolutionBiasActivationForward)        \
  X(cudnnGetConvolutionBackwardDataAlgorithm_v7)  \
  X(cudnnGetConvolutionBackwardDataWorkspaceSize) \
  X(cudnnConvolutionBackwardData)                 \
  X(cudnnAddTensor)                               \
  X(cudnnActivationForward)                       \
  X(cudnnBackendCreateDescriptor)                 \
  X(cudnnBackendDestroyDescriptor)                \
  X(cudnnBackendSetAttribute)                     \
  X(cudnnBackendGetAttribute)                     \
  X(cudnnBackendFinalize)                         \
  X(cudnnBackendExecute)

#define ORTC_CUBLASLT_SYMBOLS(X)          \
  X(cublasLtGetVersion)                   \
  X(cublasLtCreate)                       \
  X(cublasLtDestroy)                      \
  X(cublasLtMatmulDescCreate)             \
  X(cublasLtMatmulDescDestroy)            \
  X(cublasLtMatmulDescSetAttribute)       \
  X(cublasLtMatrixLayoutCreate)           \
  X(cublasLtMatrixLayoutDestroy)          \
  X(cublasLtMatrixLayoutSetAttribute)     \
  X(cublasLtMatmulPreferenceCreate)       \
  X(cublasLtMatmulPreferenceDestroy)      \
  X(cublasLtMatmulPreferenceSetAttribute) \
  X(cublasLtMatmulAlgoGetHeuristic)       \
  X(cublasLtMatmul)

#define ORTC_CUDA_DECLARE_SYMBOL(name) decltype(&::name) name = nullptr;

// A loaded library: `loaded` false means `error` says why (the dlopen/dlsym text).
struct LibraryState {
  bool loaded = false;
  std::string soname;
  std::string error;
};

struct DriverApi : LibraryState {
  ORTC_CUDA_DRIVER_SYMBOLS(ORTC_CUDA_DECLARE_SYMBOL)
};
struct CudnnApi : LibraryState {
  ORTC_CUDNN_SYMBOLS(ORTC_CUDA_DECLARE_SYMBOL)
};
struct CublasLtApi : LibraryState {
  ORTC_CUBLASLT_SYMBOLS(ORTC_CUDA_DECLARE_SYMBOL)
};

// Loaded once per process on first use, then kept; never throw.
const DriverApi& Driver();
const CudnnApi& Cudnn();
const CublasLtApi& CublasLt();

}  // namespace ortc::cuda_rt
