// The stand-in libcublasLt.so.13: handles, descriptors and layouts counted (leaks show), the
// compute type of each matmul descriptor recorded (the TF32 policy is visible), one heuristic
// result, and matmuls enqueued on their stream through the stand-in driver.
#include <cublasLt.h>

#include <map>
#include <mutex>
#include <string>

#include "library_calls.h"
#include "standin_api.h"

struct cublasLtContext {};

namespace {

// Plain text for the calls a run makes (no allocation), strings for composed names.
cublasStatus_t Call(const char* name) {
  return ortc::standin::RecordCall(name, CUBLAS_STATUS_SUCCESS, CUBLAS_STATUS_INTERNAL_ERROR);
}
cublasStatus_t Call(const std::string& name) {
  return Call(name.c_str());
}

const char* ComputeName(cublasComputeType_t t) {
  switch (t) {
    case CUBLAS_COMPUTE_32F:
      return "CUBLAS_COMPUTE_32F";
    case CUBLAS_COMPUTE_32F_PEDANTIC:
      return "CUBLAS_COMPUTE_32F_PEDANTIC";
    case CUBLAS_COMPUTE_32F_FAST_TF32:
      return "CUBLAS_COMPUTE_32F_FAST_TF32";
    case CUBLAS_COMPUTE_32F_FAST_16F:
      return "CUBLAS_COMPUTE_32F_FAST_16F";
    case CUBLAS_COMPUTE_32F_FAST_16BF:
      return "CUBLAS_COMPUTE_32F_FAST_16BF";
    default:
      return "other";
  }
}

template <typename T>
cublasStatus_t Create(const std::string& name, T** out) {
  return ortc::standin::CreateObject(Call(name), CUBLAS_STATUS_SUCCESS, "cublaslt_object", out);
}

template <typename T>
cublasStatus_t Destroy(const char* name, T* p) {
  ortc::standin::DestroyObject("cublaslt_object", p);
  return Call(name);
}

}  // namespace

extern "C" {

size_t cublasLtGetVersion(void) {
  return 130100;
}
cublasStatus_t cublasLtCreate(cublasLtHandle_t* h) {
  const cublasStatus_t s = Call("cublasLtCreate");
  if (s != CUBLAS_STATUS_SUCCESS) return s;
  *h = new cublasLtContext();
  ortc_standin_object("cublaslt_handle", 1);
  return s;
}
cublasStatus_t cublasLtDestroy(cublasLtHandle_t h) {
  delete h;
  ortc_standin_object("cublaslt_handle", -1);
  return Call("cublasLtDestroy");
}
cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* d, cublasComputeType_t compute,
                                        cudaDataType_t) {
  return Create(std::string("cublasLtMatmulDescCreate:") + ComputeName(compute), d);
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d) {
  return Destroy("cublasLtMatmulDescDestroy", d);
}
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t,
                                              const void*, size_t) {
  return Call("cublasLtMatmulDescSetAttribute");
}
cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* l, cudaDataType,
                                          uint64_t rows, uint64_t cols, int64_t ld) {
  // The geometry in the recorded name (a load-time call): tests read the leading dimensions.
  return Create("cublasLtMatrixLayoutCreate:" + std::to_string(rows) + "x" + std::to_string(cols) +
                    ":ld" + std::to_string(ld),
                l);
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l) {
  return Destroy("cublasLtMatrixLayoutDestroy", l);
}
cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t,
                                                cublasLtMatrixLayoutAttribute_t, const void*,
                                                size_t) {
  return Call("cublasLtMatrixLayoutSetAttribute");
}
cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* p) {
  return Create("cublasLtMatmulPreferenceCreate", p);
}
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p) {
  return Destroy("cublasLtMatmulPreferenceDestroy", p);
}
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t,
                                                    cublasLtMatmulPreferenceAttributes_t,
                                                    const void*, size_t) {
  return Call("cublasLtMatmulPreferenceSetAttribute");
}
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t, cublasLtMatmulDesc_t,
                                              cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                              cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                              cublasLtMatmulPreference_t, int requested,
                                              cublasLtMatmulHeuristicResult_t results[],
                                              int* returned) {
  const cublasStatus_t s = Call("cublasLtMatmulAlgoGetHeuristic");
  if (s != CUBLAS_STATUS_SUCCESS) return s;
  *returned = requested > 0 ? 1 : 0;
  if (requested > 0) {
    results[0] = {};
    results[0].state = CUBLAS_STATUS_SUCCESS;
    results[0].workspaceSize = 1024;
  }
  return s;
}
cublasStatus_t cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t, const void*, const void* a,
                              cublasLtMatrixLayout_t, const void* b, cublasLtMatrixLayout_t,
                              const void*, const void* c, cublasLtMatrixLayout_t, void* d,
                              cublasLtMatrixLayout_t, const cublasLtMatmulAlgo_t* algo,
                              void* workspace, size_t workspace_bytes, cudaStream_t stream) {
  const cublasStatus_t s = Call("cublasLtMatmul");
  if (s != CUBLAS_STATUS_SUCCESS) return s;
  for (const void* p : {a, b, c, static_cast<const void*>(d)}) {
    if (!ortc_standin_is_device_range(p, 1)) {
      ortc_standin_record("error:cublasLtMatmul operand outside device memory");
      return CUBLAS_STATUS_INVALID_VALUE;
    }
  }
  if (!algo || (workspace_bytes && !ortc_standin_is_device_range(workspace, workspace_bytes))) {
    ortc_standin_record("error:cublasLtMatmul workspace outside device memory");
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  return ortc_standin_enqueue(reinterpret_cast<CUstream>(stream), "cublasLtMatmul") == CUDA_SUCCESS
             ? CUBLAS_STATUS_SUCCESS
             : CUBLAS_STATUS_EXECUTION_FAILED;
}

}  // extern "C"
