// Caller memory: cuMemAlloc'ed buffers kept by address until freed, zero-filled and copied on a
// short-lived stream of their own (graphs run on theirs and synchronise before returning, so
// these calls never overlap a run's use of the same bytes).
#include "caller_memory.h"

#include <map>
#include <memory>
#include <mutex>

#include "device_memory.h"
#include "plugin_error.h"

namespace ortc::cuda_rt {
namespace {

struct CallerBuffers {
  std::mutex mu;
  std::map<CUdeviceptr, std::shared_ptr<DeviceBuffer>> by_address;
};

CallerBuffers& Buffers() {
  static CallerBuffers* b = new CallerBuffers();  // outlives static destructors of the host
  return *b;
}

// Runs `issue` on a fresh stream in the device's context and waits for it.
template <typename F>
OrtcPluginStatus OnOwnStream(const DeviceContext& dev, F&& issue) {
  ScopedContext scope(dev.context);
  if (!scope.ok()) return Fail(ORTC_PLUGIN_EP_FAIL, "cannot make the CUDA context current");
  const auto& d = Driver();
  CUstream stream = nullptr;
  ORTC_CU(d.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CUresult r = issue(stream);
  const CUresult sync = d.cuStreamSynchronize(stream);
  d.cuStreamDestroy(stream);
  if (r == CUDA_SUCCESS) r = sync;
  if (r != CUDA_SUCCESS) return Fail(ORTC_PLUGIN_EP_FAIL, CuText(r, "caller memory"));
  return ORTC_PLUGIN_OK;
}

}  // namespace

OrtcPluginStatus AllocateCallerMemory(uint64_t bytes, void** out) {
  if (!out) return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "allocate_device: null argument");
  *out = nullptr;
  if (bytes == 0) return ORTC_PLUGIN_OK;
  const DeviceContext* dev = nullptr;
  ORTC_PLUGIN_TRY(AcquireDevice(&dev));
  std::shared_ptr<DeviceBuffer> buf;
  ORTC_PLUGIN_TRY(AllocateDevice(*dev, bytes, &buf));
  ORTC_PLUGIN_TRY(OnOwnStream(
      *dev, [&](CUstream s) { return Driver().cuMemsetD8Async(buf->ptr(), 0, bytes, s); }));
  CallerBuffers& b = Buffers();
  std::lock_guard<std::mutex> lock(b.mu);
  b.by_address[buf->ptr()] = buf;
  *out = reinterpret_cast<void*>(buf->ptr());
  return ORTC_PLUGIN_OK;
}

void FreeCallerMemory(void* data) {
  std::shared_ptr<DeviceBuffer> buf;  // freed outside the lock
  CallerBuffers& b = Buffers();
  std::lock_guard<std::mutex> lock(b.mu);
  auto it = b.by_address.find(reinterpret_cast<CUdeviceptr>(data));
  if (it == b.by_address.end()) return;
  buf = std::move(it->second);
  b.by_address.erase(it);
}

OrtcPluginStatus CopyMemory(void* dst, int32_t dst_location, const void* src, int32_t src_location,
                            uint64_t bytes) {
  auto known = [](int32_t l) { return l == ORTC_MEMORY_HOST || l == ORTC_MEMORY_DEVICE; };
  if (!known(dst_location) || !known(src_location))
    return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "copy_memory: unknown memory location");
  if (bytes == 0) return ORTC_PLUGIN_OK;
  if (!dst || !src) return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "copy_memory: null pointer");
  if (dst_location == ORTC_MEMORY_HOST && src_location == ORTC_MEMORY_HOST)
    return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "copy_memory: neither side is device memory");
  const DeviceContext* dev = nullptr;
  ORTC_PLUGIN_TRY(AcquireDevice(&dev));
  const auto& d = Driver();
  const auto dptr = [](const void* p) { return reinterpret_cast<CUdeviceptr>(p); };
  return OnOwnStream(*dev, [&](CUstream s) {
    if (src_location == ORTC_MEMORY_HOST) return d.cuMemcpyHtoDAsync(dptr(dst), src, bytes, s);
    if (dst_location == ORTC_MEMORY_HOST) return d.cuMemcpyDtoHAsync(dst, dptr(src), bytes, s);
    return d.cuMemcpyDtoDAsync(dptr(dst), dptr(src), bytes, s);
  });
}

OrtcPluginStatus CopyMemoryRows(void* dst, int32_t dst_location, uint64_t dst_pitch,
                                const void* src, int32_t src_location, uint64_t src_pitch,
                                uint64_t row_bytes, uint64_t rows) {
  auto known = [](int32_t l) { return l == ORTC_MEMORY_HOST || l == ORTC_MEMORY_DEVICE; };
  if (!known(dst_location) || !known(src_location))
    return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "copy_memory_rows: unknown memory location");
  if (row_bytes == 0 || rows == 0) return ORTC_PLUGIN_OK;
  if (!dst || !src) return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "copy_memory_rows: null pointer");
  if (dst_location == ORTC_MEMORY_HOST && src_location == ORTC_MEMORY_HOST)
    return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "copy_memory_rows: neither side is device memory");
  if ((rows > 1 && (dst_pitch < row_bytes || src_pitch < row_bytes)))
    return Fail(ORTC_PLUGIN_INVALID_ARGUMENT, "copy_memory_rows: a pitch shorter than a row");
  const DeviceContext* dev = nullptr;
  ORTC_PLUGIN_TRY(AcquireDevice(&dev));
  // One strided copy for the whole block (cuMemcpy2D): rows apart in memory cost one call.
  CUDA_MEMCPY2D copy{};
  const auto side = [](int32_t location) {
    return location == ORTC_MEMORY_DEVICE ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
  };
  copy.srcMemoryType = side(src_location);
  copy.dstMemoryType = side(dst_location);
  if (src_location == ORTC_MEMORY_DEVICE)
    copy.srcDevice = reinterpret_cast<CUdeviceptr>(src);
  else
    copy.srcHost = src;
  if (dst_location == ORTC_MEMORY_DEVICE)
    copy.dstDevice = reinterpret_cast<CUdeviceptr>(dst);
  else
    copy.dstHost = dst;
  copy.srcPitch = rows > 1 ? src_pitch : row_bytes;
  copy.dstPitch = rows > 1 ? dst_pitch : row_bytes;
  copy.WidthInBytes = row_bytes;
  copy.Height = rows;
  const auto& d = Driver();
  return OnOwnStream(*dev, [&](CUstream s) { return d.cuMemcpy2DAsync(&copy, s); });
}

}  // namespace ortc::cuda_rt
