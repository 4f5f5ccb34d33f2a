// Device memory and modules shared across graphs and sessions of the process: weights are
// uploaded once per (binary content id, weight pool index), module images loaded once per
// (content id, artefact); each goes away with the last graph using it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "device_info.h"

namespace ortc::cuda_rt {

class DeviceBuffer {
 public:
  DeviceBuffer(CUcontext ctx, CUdeviceptr ptr, uint64_t size) : ctx_(ctx), ptr_(ptr), size_(size) {}
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  CUdeviceptr ptr() const { return ptr_; }
  uint64_t size() const { return size_; }

 private:
  CUcontext ctx_;
  CUdeviceptr ptr_;
  uint64_t size_;
};

// A buffer of this graph alone (arena, staging, workspace); 0 bytes gives a null buffer.
OrtcPluginStatus AllocateDevice(const DeviceContext& dev, uint64_t bytes,
                                std::shared_ptr<DeviceBuffer>* out);

// The process's copy of one weight, uploaded on first request.
OrtcPluginStatus SharedWeight(const DeviceContext& dev, const std::string& content_id,
                              uint32_t pool_index, const void* data, uint64_t size,
                              std::shared_ptr<DeviceBuffer>* out);

class LoadedModule {
 public:
  LoadedModule(CUcontext ctx, CUmodule module) : ctx_(ctx), module_(module) {}
  ~LoadedModule();
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;
  CUmodule get() const { return module_; }

 private:
  CUcontext ctx_;
  CUmodule module_;
};

// Loads a cubin, or JIT-compiles PTX (the driver's compiler; its log is in the error).
OrtcPluginStatus SharedModule(const DeviceContext& dev, const std::string& content_id,
                              const std::string& artefact, const void* image, uint64_t size,
                              bool is_ptx, std::shared_ptr<LoadedModule>* out);

}  // namespace ortc::cuda_rt
