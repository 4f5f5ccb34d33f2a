// The stand-in libcudnn.so.9: the legacy convolution calls and the graph (backend) API the CUDA
// plugin uses. Descriptors are counted (leaks show), plans are recorded, and work is enqueued on
// the handle's stream through the stand-in driver. Heuristics offer two engines: engine 0 with
// the TENSOR_CORE numerical note and engine 1 without, so tests see which one a precision picks.
#include <cudnn.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "library_calls.h"
#include "standin_api.h"

struct cudnnContext {
  CUstream stream = nullptr;
};
struct cudnnTensorStruct {};
struct cudnnFilterStruct {};
struct cudnnConvolutionStruct {};
struct cudnnActivationStruct {};

namespace {

struct Attribute {
  cudnnBackendAttributeType_t type;
  int64_t count = 0;
  std::vector<char> bytes;
};

struct BackendDescriptor {
  cudnnBackendDescriptorType_t type;
  std::map<int, Attribute> attrs;
  bool finalized = false;
  int engine = -1;  // ENGINE / ENGINECFG / EXECUTION_PLAN: the stand-in engine index
};

constexpr int kEngines = 2;

const char* TypeName(cudnnBackendDescriptorType_t t) {
  switch (t) {
    case CUDNN_BACKEND_TENSOR_DESCRIPTOR:
      return "TENSOR";
    case CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR:
      return "CONVOLUTION";
    case CUDNN_BACKEND_POINTWISE_DESCRIPTOR:
      return "POINTWISE";
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
      return "OPERATION_CONVOLUTION_FORWARD";
    case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR:
      return "OPERATION_POINTWISE";
    case CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR:
      return "OPERATIONGRAPH";
    case CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR:
      return "ENGINEHEUR";
    case CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:
      return "ENGINECFG";
    case CUDNN_BACKEND_ENGINE_DESCRIPTOR:
      return "ENGINE";
    case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR:
      return "EXECUTION_PLAN";
    case CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR:
      return "VARIANT_PACK";
    default:
      return "OTHER";
  }
}

// Plain text for the calls a run makes (no allocation), strings for composed names.
cudnnStatus_t Call(const char* name) {
  return ortc::standin::RecordCall(name, CUDNN_STATUS_SUCCESS, CUDNN_STATUS_INTERNAL_ERROR);
}
cudnnStatus_t Call(const std::string& name) {
  return Call(name.c_str());
}

template <typename T>
cudnnStatus_t Create(const char* name, T** out) {
  return ortc::standin::CreateObject(Call(name), CUDNN_STATUS_SUCCESS, "cudnn_descriptor", out);
}

template <typename T>
cudnnStatus_t Destroy(const char* name, T* p) {
  ortc::standin::DestroyObject("cudnn_descriptor", p);
  return Call(name);
}

const char* MathName(cudnnMathType_t m) {
  switch (m) {
    case CUDNN_DEFAULT_MATH:
      return "CUDNN_DEFAULT_MATH";
    case CUDNN_TENSOR_OP_MATH:
      return "CUDNN_TENSOR_OP_MATH";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION:
      return "CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION";
    case CUDNN_FMA_MATH:
      return "CUDNN_FMA_MATH";
  }
  return "?";
}

// Legacy compute work: arguments that are device memory must be device memory.
cudnnStatus_t Work(cudnnHandle_t h, const char* name, std::initializer_list<const void*> device) {
  const cudnnStatus_t s = Call(name);
  if (s != CUDNN_STATUS_SUCCESS) return s;
  for (const void* p : device) {
    if (p && !ortc_standin_is_device_range(p, 1)) {
      ortc_standin_record(
          (std::string("error:") + name + " argument outside device memory").c_str());
      return CUDNN_STATUS_BAD_PARAM;
    }
  }
  return ortc_standin_enqueue(h->stream, name) == CUDA_SUCCESS ? CUDNN_STATUS_SUCCESS
                                                               : CUDNN_STATUS_EXECUTION_FAILED;
}

}  // namespace

extern "C" {

size_t cudnnGetVersion(void) {
  return 91900;
}
const char* cudnnGetErrorString(cudnnStatus_t) {
  return "CUDNN_STATUS_STAND_IN_ERROR";
}
cudnnStatus_t cudnnCreate(cudnnHandle_t* h) {
  const cudnnStatus_t s = Call("cudnnCreate");
  if (s != CUDNN_STATUS_SUCCESS) return s;
  *h = new cudnnContext();
  ortc_standin_object("cudnn_handle", 1);
  return s;
}
cudnnStatus_t cudnnDestroy(cudnnHandle_t h) {
  delete h;
  ortc_standin_object("cudnn_handle", -1);
  return Call("cudnnDestroy");
}
cudnnStatus_t cudnnSetStream(cudnnHandle_t h, cudaStream_t s) {
  h->stream = reinterpret_cast<CUstream>(s);
  return Call("cudnnSetStream");
}

cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t* d) {
  return Create("cudnnCreateTensorDescriptor", d);
}
cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d) {
  return Destroy("cudnnDestroyTensorDescriptor", d);
}
cudnnStatus_t cudnnSetTensorNdDescriptorEx(cudnnTensorDescriptor_t, cudnnTensorFormat_t,
                                           cudnnDataType_t, int, const int[]) {
  return Call("cudnnSetTensorNdDescriptorEx");
}
cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t* d) {
  return Create("cudnnCreateFilterDescriptor", d);
}
cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d) {
  return Destroy("cudnnDestroyFilterDescriptor", d);
}
cudnnStatus_t cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t, cudnnDataType_t,
                                         cudnnTensorFormat_t, int, const int[]) {
  return Call("cudnnSetFilterNdDescriptor");
}
cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t* d) {
  return Create("cudnnCreateConvolutionDescriptor", d);
}
cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t d) {
  return Destroy("cudnnDestroyConvolutionDescriptor", d);
}
cudnnStatus_t cudnnSetConvolutionNdDescriptor(cudnnConvolutionDescriptor_t, int, const int[],
                                              const int[], const int[], cudnnConvolutionMode_t,
                                              cudnnDataType_t) {
  return Call("cudnnSetConvolutionNdDescriptor");
}
cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t, int) {
  return Call("cudnnSetConvolutionGroupCount");
}
cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t, cudnnMathType_t m) {
  return Call(std::string("cudnnSetConvolutionMathType:") + MathName(m));
}
cudnnStatus_t cudnnCreateActivationDescriptor(cudnnActivationDescriptor_t* d) {
  return Create("cudnnCreateActivationDescriptor", d);
}
cudnnStatus_t cudnnDestroyActivationDescriptor(cudnnActivationDescriptor_t d) {
  return Destroy("cudnnDestroyActivationDescriptor", d);
}
cudnnStatus_t cudnnSetActivationDescriptor(cudnnActivationDescriptor_t, cudnnActivationMode_t,
                                           cudnnNanPropagation_t, double) {
  return Call("cudnnSetActivationDescriptor");
}
cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(cudnnHandle_t, const cudnnTensorDescriptor_t,
                                                     const cudnnFilterDescriptor_t,
                                                     const cudnnConvolutionDescriptor_t,
                                                     const cudnnTensorDescriptor_t, const int n,
                                                     int* returned,
                                                     cudnnConvolutionFwdAlgoPerf_t* perf) {
  const cudnnStatus_t s = Call("cudnnGetConvolutionForwardAlgorithm_v7");
  if (s != CUDNN_STATUS_SUCCESS || n < 1) return s;
  perf[0] = {};
  perf[0].algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
  perf[0].status = CUDNN_STATUS_SUCCESS;
  *returned = 1;
  return s;
}
cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t, const cudnnTensorDescriptor_t,
                                                      const cudnnFilterDescriptor_t,
                                                      const cudnnConvolutionDescriptor_t,
                                                      const cudnnTensorDescriptor_t,
                                                      cudnnConvolutionFwdAlgo_t, size_t* bytes) {
  *bytes = 0;
  return Call("cudnnGetConvolutionForwardWorkspaceSize");
}
cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t h, const void*, const cudnnTensorDescriptor_t,
                                      const void* x, const cudnnFilterDescriptor_t, const void* w,
                                      const cudnnConvolutionDescriptor_t, cudnnConvolutionFwdAlgo_t,
                                      void*, size_t, const void*, const cudnnTensorDescriptor_t,
                                      void* y) {
  return Work(h, "cudnnConvolutionForward", {x, w, y});
}
cudnnStatus_t cudnnConvolutionBiasActivationForward(
    cudnnHandle_t h, const void*, const cudnnTensorDescriptor_t, const void* x,
    const cudnnFilterDescriptor_t, const void* w, const cudnnConvolutionDescriptor_t,
    cudnnConvolutionFwdAlgo_t, void*, size_t, const void*, const cudnnTensorDescriptor_t,
    const void* z, const cudnnTensorDescriptor_t, const void* bias,
    const cudnnActivationDescriptor_t, const cudnnTensorDescriptor_t, void* y) {
  return Work(h, "cudnnConvolutionBiasActivationForward", {x, w, z, bias, y});
}
cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(
    cudnnHandle_t, const cudnnFilterDescriptor_t, const cudnnTensorDescriptor_t,
    const cudnnConvolutionDescriptor_t, const cudnnTensorDescriptor_t, const int n, int* returned,
    cudnnConvolutionBwdDataAlgoPerf_t* perf) {
  const cudnnStatus_t s = Call("cudnnGetConvolutionBackwardDataAlgorithm_v7");
  if (s != CUDNN_STATUS_SUCCESS || n < 1) return s;
  perf[0] = {};
  perf[0].algo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
  perf[0].status = CUDNN_STATUS_SUCCESS;
  *returned = 1;
  return s;
}
cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(
    cudnnHandle_t, const cudnnFilterDescriptor_t, const cudnnTensorDescriptor_t,
    const cudnnConvolutionDescriptor_t, const cudnnTensorDescriptor_t,
    cudnnConvolutionBwdDataAlgo_t, size_t* bytes) {
  *bytes = 0;
  return Call("cudnnGetConvolutionBackwardDataWorkspaceSize");
}
cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t h, const void*,
                                           const cudnnFilterDescriptor_t, const void* w,
                                           const cudnnTensorDescriptor_t, const void* dy,
                                           const cudnnConvolutionDescriptor_t,
                                           cudnnConvolutionBwdDataAlgo_t, void*, size_t,
                                           const void*, const cudnnTensorDescriptor_t, void* dx) {
  return Work(h, "cudnnConvolutionBackwardData", {w, dy, dx});
}
cudnnStatus_t cudnnAddTensor(cudnnHandle_t h, const void*, const cudnnTensorDescriptor_t,
                             const void* a, const void*, const cudnnTensorDescriptor_t, void* c) {
  return Work(h, "cudnnAddTensor", {a, c});
}
cudnnStatus_t cudnnActivationForward(cudnnHandle_t h, cudnnActivationDescriptor_t, const void*,
                                     const cudnnTensorDescriptor_t, const void* x, const void*,
                                     const cudnnTensorDescriptor_t, void* y) {
  return Work(h, "cudnnActivationForward", {x, y});
}

// --- Graph (backend) API ---

cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type,
                                           cudnnBackendDescriptor_t* d) {
  const cudnnStatus_t s = Call(std::string("cudnnBackendCreateDescriptor:") + TypeName(type));
  if (s != CUDNN_STATUS_SUCCESS) return s;
  *d = new BackendDescriptor{type, {}, false, -1};
  ortc_standin_object("cudnn_descriptor", 1);
  return s;
}
cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t d) {
  delete static_cast<BackendDescriptor*>(d);
  ortc_standin_object("cudnn_descriptor", -1);
  return Call("cudnnBackendDestroyDescriptor");
}
cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t type, int64_t count,
                                       const void* elements) {
  const cudnnStatus_t s = Call("cudnnBackendSetAttribute");
  if (s != CUDNN_STATUS_SUCCESS) return s;
  auto* desc = static_cast<BackendDescriptor*>(d);
  if (desc->finalized) return CUDNN_STATUS_NOT_INITIALIZED;
  size_t size = 8;  // every element type the plugin sets is at most 8 bytes
  if (type == CUDNN_TYPE_FLOAT || type == CUDNN_TYPE_INT32) size = 4;
  if (type == CUDNN_TYPE_BOOLEAN) size = sizeof(bool);
  if (type == CUDNN_TYPE_DATA_TYPE || type == CUDNN_TYPE_POINTWISE_MODE ||
      type == CUDNN_TYPE_CONVOLUTION_MODE || type == CUDNN_TYPE_HEUR_MODE ||
      type == CUDNN_TYPE_NUMERICAL_NOTE)
    size = sizeof(int);
  Attribute a{type, count, std::vector<char>(size * static_cast<size_t>(count))};
  if (count) std::memcpy(a.bytes.data(), elements, a.bytes.size());
  if (name == CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG && count == 1)
    desc->engine = (*static_cast<BackendDescriptor* const*>(elements))->engine;
  desc->attrs[name] = std::move(a);
  return s;
}
cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t d) {
  auto* desc = static_cast<BackendDescriptor*>(d);
  const cudnnStatus_t s = Call(std::string("cudnnBackendFinalize:") + TypeName(desc->type));
  if (s != CUDNN_STATUS_SUCCESS || ortc_standin_fail("cudnnBackendFinalize"))
    return CUDNN_STATUS_NOT_SUPPORTED;
  if (desc->type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)
    ortc_standin_record(("cudnn_plan_engine:" + std::to_string(desc->engine)).c_str());
  desc->finalized = true;
  return s;
}
cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const d,
                                       cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t, int64_t requested,
                                       int64_t* count, void* elements) {
  const cudnnStatus_t s = Call("cudnnBackendGetAttribute");
  if (s != CUDNN_STATUS_SUCCESS) return s;
  auto* desc = static_cast<BackendDescriptor*>(d);
  if (!desc->finalized && desc->type != CUDNN_BACKEND_ENGINECFG_DESCRIPTOR &&
      desc->type != CUDNN_BACKEND_ENGINE_DESCRIPTOR)
    return CUDNN_STATUS_NOT_INITIALIZED;
  switch (name) {
    case CUDNN_ATTR_ENGINEHEUR_RESULTS: {
      const int64_t n = requested < kEngines ? requested : kEngines;
      auto** cfgs = static_cast<BackendDescriptor**>(elements);
      for (int64_t i = 0; i < n; ++i) {
        cfgs[i]->engine = static_cast<int>(i);
        cfgs[i]->finalized = true;
      }
      if (count) *count = requested == 0 ? kEngines : n;
      return s;
    }
    case CUDNN_ATTR_ENGINECFG_ENGINE: {
      auto** engine = static_cast<BackendDescriptor**>(elements);
      engine[0]->engine = desc->engine;
      engine[0]->finalized = true;
      if (count) *count = 1;
      return s;
    }
    case CUDNN_ATTR_ENGINE_NUMERICAL_NOTE: {
      // Engine 0 runs on tensor cores (TF32 for float data); engine 1 uses FMA only.
      const int64_t n = desc->engine == 0 ? 1 : 0;
      if (n && requested >= 1)
        static_cast<cudnnBackendNumericalNote_t*>(elements)[0] = CUDNN_NUMERICAL_NOTE_TENSOR_CORE;
      if (count) *count = n;
      return s;
    }
    case CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE:
      *static_cast<int64_t*>(elements) = 4096;
      if (count) *count = 1;
      return s;
    default:
      return CUDNN_STATUS_NOT_SUPPORTED;
  }
}
// Every data pointer of the variant pack and its workspace must be device memory.
cudnnStatus_t cudnnBackendExecute(cudnnHandle_t h, cudnnBackendDescriptor_t plan,
                                  cudnnBackendDescriptor_t pack) {
  const cudnnStatus_t s = Call("cudnnBackendExecute");
  if (s != CUDNN_STATUS_SUCCESS) return s;
  auto* p = static_cast<BackendDescriptor*>(plan);
  auto* v = static_cast<BackendDescriptor*>(pack);
  if (!p->finalized || !v->finalized) return CUDNN_STATUS_NOT_INITIALIZED;
  auto ptrs = v->attrs.find(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS);
  auto ids = v->attrs.find(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS);
  auto ws = v->attrs.find(CUDNN_ATTR_VARIANT_PACK_WORKSPACE);
  if (ptrs == v->attrs.end() || ids == v->attrs.end() || ptrs->second.count != ids->second.count)
    return CUDNN_STATUS_BAD_PARAM;
  const size_t n = static_cast<size_t>(ptrs->second.count);
  for (size_t i = 0; i <= n; ++i) {
    if (i == n && ws == v->attrs.end()) break;
    const char* from =
        i < n ? ptrs->second.bytes.data() + i * sizeof(void*) : ws->second.bytes.data();
    void* d = nullptr;
    std::memcpy(&d, from, sizeof(d));
    if (!ortc_standin_is_device_range(d, 1)) {
      ortc_standin_record("error:cudnnBackendExecute pointer outside device memory");
      return CUDNN_STATUS_BAD_PARAM;
    }
  }
  return ortc_standin_enqueue(h->stream, "cudnnBackendExecute") == CUDA_SUCCESS
             ? CUDNN_STATUS_SUCCESS
             : CUDNN_STATUS_EXECUTION_FAILED;
}

}  // extern "C"
