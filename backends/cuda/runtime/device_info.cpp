// Device detection through the driver symbol table; never fails: what is missing is reported.
#include "device_info.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

namespace ortc::cuda_rt {
namespace {

std::string Version3(size_t major, size_t minor, size_t patch) {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

// cudnnGetVersion: 9.x is major*10000 + minor*100 + patch; 8.x was major*1000 + minor*100 + patch.
std::string CudnnVersion(size_t v) {
  if (v >= 90000) return Version3(v / 10000, (v % 10000) / 100, v % 100);
  return Version3(v / 1000, (v % 1000) / 100, v % 100);
}

// cublasLtGetVersion: major*10000 + minor*100 + patch.
std::string CublasVersion(size_t v) {
  return Version3(v / 10000, (v % 10000) / 100, v % 100);
}

int DeviceOrdinal() {
  const char* env = std::getenv("ORTC_CUDA_DEVICE");
  return env ? std::atoi(env) : 0;
}

// cuInit once per process; its result (and text) is remembered.
CUresult InitDriver(std::string* error) {
  static std::once_flag once;
  static CUresult result = CUDA_ERROR_NOT_INITIALIZED;
  static std::string text;
  std::call_once(once, [] {
    const auto& d = Driver();
    if (!d.loaded) {
      text = "no CUDA driver found (" + d.error + ")";
      return;
    }
    result = d.cuInit(0);
    if (result != CUDA_SUCCESS) text = CuText(result, "cuInit");
  });
  *error = text;
  return result;
}

}  // namespace

std::string DescribeDeviceJson() {
  nlohmann::json j = nlohmann::json::object();
  const auto& d = Driver();
  std::string init_error;
  if (!d.loaded) {
    j["driver_version"] = 0;
    j["unavailable_reason"] = "no CUDA driver found (" + d.error + ")";
  } else {
    int version = 0;
    if (d.cuDriverGetVersion(&version) == CUDA_SUCCESS) j["driver_version"] = version;
    if (InitDriver(&init_error) != CUDA_SUCCESS) {
      j["unavailable_reason"] = init_error;
    } else {
      int count = 0;
      d.cuDeviceGetCount(&count);
      std::vector<std::string> archs;
      for (int i = 0; i < count; ++i) {
        CUdevice dev = 0;
        int major = 0, minor = 0;
        if (d.cuDeviceGet(&dev, i) != CUDA_SUCCESS) continue;
        d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
        d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
        archs.push_back("sm_" + std::to_string(major * 10 + minor));
      }
      // The gate reads the first arch: put the device this plugin uses first.
      const int ordinal = DeviceOrdinal();
      if (ordinal > 0 && ordinal < static_cast<int>(archs.size()))
        std::swap(archs[0], archs[static_cast<size_t>(ordinal)]);
      j["archs"] = archs;
      if (archs.empty()) j["unavailable_reason"] = "the CUDA driver reports no device";
    }
  }
  const auto& dnn = Cudnn();
  if (dnn.loaded)
    j["cudnn_version"] = CudnnVersion(dnn.cudnnGetVersion());
  else
    j["cudnn_reason"] = dnn.error;
  const auto& lt = CublasLt();
  if (lt.loaded)
    j["cublas_version"] = CublasVersion(lt.cublasLtGetVersion());
  else
    j["cublas_reason"] = lt.error;
  return j.dump();
}

OrtcPluginStatus AcquireDevice(const DeviceContext** out) {
  static std::mutex mu;
  static DeviceContext* ctx = nullptr;
  std::lock_guard<std::mutex> lock(mu);
  if (ctx) {
    *out = ctx;
    return ORTC_PLUGIN_OK;
  }
  std::string error;
  if (InitDriver(&error) != CUDA_SUCCESS) return Fail(ORTC_PLUGIN_UNSUPPORTED, error);
  const auto& d = Driver();
  auto c = std::make_unique<DeviceContext>();
  const int ordinal = DeviceOrdinal();
  int count = 0;
  ORTC_CU(d.cuDeviceGetCount(&count));
  if (ordinal < 0 || ordinal >= count) {
    return Fail(ORTC_PLUGIN_UNSUPPORTED, "no CUDA device " + std::to_string(ordinal) + " (" +
                                             std::to_string(count) + " found)");
  }
  ORTC_CU(d.cuDeviceGet(&c->device, ordinal));
  int major = 0, minor = 0;
  ORTC_CU(d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, c->device));
  ORTC_CU(d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, c->device));
  c->sm = major * 10 + minor;
  c->arch = "sm_" + std::to_string(c->sm);
  // The primary context is the one every user of the device in this process shares; it is
  // retained for the life of the process (never released: other sessions may still run).
  ORTC_CU(d.cuDevicePrimaryCtxRetain(&c->context, c->device));
  ctx = c.release();
  *out = ctx;
  return ORTC_PLUGIN_OK;
}

ScopedContext::ScopedContext(CUcontext ctx) {
  ok_ = Driver().cuCtxPushCurrent(ctx) == CUDA_SUCCESS;
}

ScopedContext::~ScopedContext() {
  CUcontext popped = nullptr;
  if (ok_) Driver().cuCtxPopCurrent(&popped);
}

}  // namespace ortc::cuda_rt
