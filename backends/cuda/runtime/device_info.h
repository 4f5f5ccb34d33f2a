// What the plugin knows about the machine: the describe_device JSON (driver, archs, cuDNN and
// cuBLASLt versions, or why not), and the process's CUDA context on device 0.
#pragma once

#include <string>

#include "plugin_error.h"

namespace ortc::cuda_rt {

// backends/README.md lists the keys.
std::string DescribeDeviceJson();

struct DeviceContext {
  CUdevice device = 0;
  CUcontext context = nullptr;
  int sm = 0;        // 86 for sm_86
  std::string arch;  // "sm_86"
};

// The primary context of device 0 (ORTC_CUDA_DEVICE picks another), retained on first use and
// kept for the process. UNSUPPORTED with the reason when there is no driver or no device.
OrtcPluginStatus AcquireDevice(const DeviceContext** out);

// Makes the device's context current on this thread for the scope.
class ScopedContext {
 public:
  explicit ScopedContext(CUcontext ctx);
  ~ScopedContext();
  bool ok() const { return ok_; }

 private:
  bool ok_ = false;
};

}  // namespace ortc::cuda_rt
