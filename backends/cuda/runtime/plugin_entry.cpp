// The two exported symbols of libortc_backend_cuda.so and its function table
// (backends/plugin_abi/ortc_backend_plugin.h). Nothing throws across the boundary.
#include <cstring>
#include <exception>
#include <string>

#include "caller_memory.h"
#include "device_info.h"
#include "graph_instance.h"

namespace ortc::cuda_rt {
namespace {

// Catches what the standard library may throw (bad_alloc) at the boundary.
template <typename F>
OrtcPluginStatus Guard(F&& f) {
  try {
    ClearError();
    return f();
  } catch (const std::exception& e) {
    return Fail(ORTC_PLUGIN_EP_FAIL, std::string("CUDA backend: ") + e.what());
  } catch (...) {
    return Fail(ORTC_PLUGIN_EP_FAIL, "CUDA backend: unknown exception");
  }
}

// The ABI's text-out rule: NUL-terminated into buffer, BUFFER_TOO_SMALL with *length when not.
OrtcPluginStatus WriteText(const std::string& text, char* buffer, size_t capacity, size_t* length,
                           const char* what) {
  if (length) *length = text.size();
  if (!buffer || capacity <= text.size())
    return Fail(ORTC_PLUGIN_BUFFER_TOO_SMALL,
                std::string(what) + " needs " + std::to_string(text.size() + 1) + " bytes");
  std::memcpy(buffer, text.c_str(), text.size() + 1);
  return ORTC_PLUGIN_OK;
}

OrtcPluginStatus DescribeDevice(OrtcBackend*, char* buffer, size_t capacity, size_t* length) {
  return Guard([&] {
    return WriteText(DescribeDeviceJson(), buffer, capacity, length, "the device description");
  });
}

OrtcPluginStatus LoadGraph(OrtcBackend*, const OrtcGraphLoadInfo* info, OrtcGraph** out) {
  return Guard([&] {
    if (!info || !out) return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "load_graph: null argument");
    std::unique_ptr<GraphInstance> g;
    ORTC_PLUGIN_TRY(GraphInstance::Load(*info, &g));
    *out = reinterpret_cast<OrtcGraph*>(g.release());
    return ORTC_PLUGIN_OK;
  });
}

OrtcPluginStatus RunGraph(OrtcGraph* graph, const OrtcTensorRef* inputs, uint32_t num_inputs,
                          OrtcTensorRef* outputs, uint32_t num_outputs) {
  return Guard([&] {
    if (!graph) return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "run_graph: null graph");
    return reinterpret_cast<GraphInstance*>(graph)->Run(inputs, num_inputs, outputs, num_outputs);
  });
}

void ReleaseGraph(OrtcGraph* graph) {
  delete reinterpret_cast<GraphInstance*>(graph);
}

const char* GetLastError(OrtcBackend*) {
  return LastError();
}

OrtcPluginStatus DescribeGraph(OrtcGraph* graph, char* buffer, size_t capacity, size_t* length) {
  return Guard([&] {
    if (!graph) return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "describe_graph: null graph");
    return WriteText(reinterpret_cast<GraphInstance*>(graph)->DescribeJson(), buffer, capacity,
                     length, "the graph description");
  });
}

OrtcPluginStatus LastRunProfile(OrtcGraph* graph, char* buffer, size_t capacity, size_t* length) {
  return Guard([&] {
    if (!graph) return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "last_run_profile: null graph");
    std::string json;
    ORTC_PLUGIN_TRY(reinterpret_cast<GraphInstance*>(graph)->LastRunProfile(&json));
    return WriteText(json, buffer, capacity, length, "the run profile");
  });
}

OrtcPluginStatus AllocateForCaller(OrtcBackend*, uint64_t bytes, void** out) {
  return Guard([&] { return AllocateCallerMemory(bytes, out); });
}

void FreeForCaller(OrtcBackend*, void* data) {
  try {
    FreeCallerMemory(data);
  } catch (...) {  // nothing crosses the boundary; a failed free leaks, which is all it can do
  }
}

OrtcPluginStatus CopyForCaller(OrtcBackend*, void* dst, int32_t dst_location, const void* src,
                               int32_t src_location, uint64_t bytes) {
  return Guard([&] { return CopyMemory(dst, dst_location, src, src_location, bytes); });
}

OrtcPluginStatus CopyRowsForCaller(OrtcBackend*, void* dst, int32_t dst_location,
                                   uint64_t dst_pitch, const void* src, int32_t src_location,
                                   uint64_t src_pitch, uint64_t row_bytes, uint64_t rows) {
  return Guard([&] {
    return CopyMemoryRows(dst, dst_location, dst_pitch, src, src_location, src_pitch, row_bytes,
                          rows);
  });
}

OrtcBackend g_backend = {ORTC_BACKEND_ABI_VERSION,
                         sizeof(OrtcBackend),
                         "cuda",
                         "ortc CUDA backend " ORTC_VERSION_STRING,
                         &DescribeDevice,
                         &LoadGraph,
                         &RunGraph,
                         &ReleaseGraph,
                         &GetLastError,
                         &DescribeGraph,
                         &LastRunProfile,
                         &AllocateForCaller,
                         &FreeForCaller,
                         &CopyForCaller,
                         &CopyRowsForCaller,
                         nullptr};

}  // namespace
}  // namespace ortc::cuda_rt

extern "C" {

__attribute__((visibility("default"))) OrtcPluginStatus ortc_backend_create(
    uint32_t host_abi_version, const OrtcHostApi* host, OrtcBackend** out) {
  if (host_abi_version != ORTC_BACKEND_ABI_VERSION) return ORTC_PLUGIN_ABI_MISMATCH;
  if (host &&
      (host->abi_version != ORTC_BACKEND_ABI_VERSION || host->struct_size < sizeof(OrtcHostApi)))
    return ORTC_PLUGIN_ABI_MISMATCH;
  if (!out) return ORTC_PLUGIN_INVALID_ARGUMENT;
  // One table for the process: vendor libraries and the device are process-wide anyway.
  *out = &ortc::cuda_rt::g_backend;
  return ORTC_PLUGIN_OK;
}

__attribute__((visibility("default"))) void ortc_backend_release(OrtcBackend*) {
  // The table is static; graphs own their resources and the libraries stay loaded.
}

}  // extern "C"
