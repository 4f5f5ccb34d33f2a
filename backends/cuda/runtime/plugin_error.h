// Error reporting inside the CUDA plugin: a failing call records its text in a thread-local
// (the ABI's last_error) and returns its OrtcPluginStatus; vendor results become text here.
#pragma once

#include <string>

#include "plugin_abi/ortc_backend_plugin.h"
#include "vendor_symbols.h"

namespace ortc::cuda_rt {

const char* LastError();
void ClearError();
OrtcPluginStatus Fail(OrtcPluginStatus code, std::string message);

// Vendor result -> text naming the call ("cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of
// memory)").
std::string CuText(CUresult r, const char* what);
std::string CudnnText(cudnnStatus_t s, const char* what);
std::string CublasText(cublasStatus_t s, const char* what);

// Return early from a function returning OrtcPluginStatus.
#define ORTC_CU(call)                                                            \
  do {                                                                           \
    const CUresult _r = (call);                                                  \
    if (_r != CUDA_SUCCESS) return Fail(ORTC_PLUGIN_EP_FAIL, CuText(_r, #call)); \
  } while (0)
#define ORTC_CUDNN(call)                                                                    \
  do {                                                                                      \
    const cudnnStatus_t _s = (call);                                                        \
    if (_s != CUDNN_STATUS_SUCCESS) return Fail(ORTC_PLUGIN_EP_FAIL, CudnnText(_s, #call)); \
  } while (0)
#define ORTC_CUBLAS(call)                                                                     \
  do {                                                                                        \
    const cublasStatus_t _s = (call);                                                         \
    if (_s != CUBLAS_STATUS_SUCCESS) return Fail(ORTC_PLUGIN_EP_FAIL, CublasText(_s, #call)); \
  } while (0)
#define ORTC_PLUGIN_TRY(expr)            \
  do {                                   \
    const OrtcPluginStatus _p = (expr);  \
    if (_p != ORTC_PLUGIN_OK) return _p; \
  } while (0)

}  // namespace ortc::cuda_rt
