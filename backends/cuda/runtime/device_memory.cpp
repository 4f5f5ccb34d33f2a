// Device allocations and the process-wide weight and module caches (weak references: an entry
// is freed with its last user and uploaded again by the next).
#include "device_memory.h"

#include <map>
#include <mutex>
#include <utility>

namespace ortc::cuda_rt {

DeviceBuffer::~DeviceBuffer() {
  if (!ptr_) return;
  ScopedContext scope(ctx_);
  if (scope.ok()) Driver().cuMemFree(ptr_);
}

LoadedModule::~LoadedModule() {
  ScopedContext scope(ctx_);
  if (scope.ok()) Driver().cuModuleUnload(module_);
}

OrtcPluginStatus AllocateDevice(const DeviceContext& dev, uint64_t bytes,
                                std::shared_ptr<DeviceBuffer>* out) {
  if (bytes == 0) {
    *out = std::make_shared<DeviceBuffer>(dev.context, 0, 0);
    return ORTC_PLUGIN_OK;
  }
  ScopedContext scope(dev.context);
  if (!scope.ok()) return Fail(ORTC_PLUGIN_EP_FAIL, "cannot make the CUDA context current");
  CUdeviceptr p = 0;
  const CUresult r = Driver().cuMemAlloc(&p, bytes);
  if (r != CUDA_SUCCESS)
    return Fail(ORTC_PLUGIN_EP_FAIL,
                CuText(r, "cuMemAlloc") + " allocating " + std::to_string(bytes) + " bytes");
  *out = std::make_shared<DeviceBuffer>(dev.context, p, bytes);
  return ORTC_PLUGIN_OK;
}

OrtcPluginStatus SharedWeight(const DeviceContext& dev, const std::string& content_id,
                              uint32_t pool_index, const void* data, uint64_t size,
                              std::shared_ptr<DeviceBuffer>* out) {
  static std::mutex mu;
  static std::map<std::pair<std::string, uint32_t>, std::weak_ptr<DeviceBuffer>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[{content_id, pool_index}];
  if (auto hit = slot.lock()) {
    if (hit->size() != size)
      return Fail(ORTC_PLUGIN_INVALID_GRAPH, "weight " + std::to_string(pool_index) +
                                                 " of binary " + content_id +
                                                 " has two different sizes");
    *out = hit;
    return ORTC_PLUGIN_OK;
  }
  std::shared_ptr<DeviceBuffer> buf;
  ORTC_PLUGIN_TRY(AllocateDevice(dev, size, &buf));
  if (size > 0) {
    ScopedContext scope(dev.context);
    ORTC_CU(Driver().cuMemcpyHtoD(buf->ptr(), data, size));
  }
  slot = buf;
  *out = buf;
  return ORTC_PLUGIN_OK;
}

OrtcPluginStatus SharedModule(const DeviceContext& dev, const std::string& content_id,
                              const std::string& artefact, const void* image, uint64_t size,
                              bool is_ptx, std::shared_ptr<LoadedModule>* out) {
  static std::mutex mu;
  static std::map<std::pair<std::string, std::string>, std::weak_ptr<LoadedModule>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[{content_id, artefact}];
  if (auto hit = slot.lock()) {
    *out = hit;
    return ORTC_PLUGIN_OK;
  }
  // PTX is text the driver reads up to a NUL; the artefact bytes need not end with one.
  std::string ptx;
  if (is_ptx) {
    ptx.assign(static_cast<const char*>(image), size);
    ptx.push_back('\0');
    image = ptx.data();
  }
  char log[8192] = {0};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log, reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof(log) - 1))};
  ScopedContext scope(dev.context);
  if (!scope.ok()) return Fail(ORTC_PLUGIN_EP_FAIL, "cannot make the CUDA context current");
  CUmodule module = nullptr;
  const CUresult r = Driver().cuModuleLoadDataEx(&module, image, 2, opts, values);
  if (r != CUDA_SUCCESS) {
    return Fail(ORTC_PLUGIN_EP_FAIL, CuText(r, "cuModuleLoadDataEx") + " loading module '" +
                                         artefact + "' for " + dev.arch +
                                         (log[0] ? std::string(": ") + log : ""));
  }
  auto m = std::make_shared<LoadedModule>(dev.context, module);
  slot = m;
  *out = m;
  return ORTC_PLUGIN_OK;
}

}  // namespace ortc::cuda_rt
