// The CUDA binary's identity (manifest versions and targets, EPContext ep_sdk_version and
// hardware_architecture). Library versions are those of the headers the compiler was built
// with; the runtime compares majors with what it loads.
#include "cuda/identity.h"

#include "cuda/cuda_binary_keys.h"
#include "cuda/toolchain/nvrtc.h"

#if defined(ORTC_HAVE_CUDA_HEADERS) && __has_include(<cuda.h>)
#include <cuda.h>
#define ORTC_CUDA_VERSION CUDA_VERSION
#endif
#if defined(ORTC_HAVE_CUDA_HEADERS) && __has_include(<cudnn_version.h>)
#include <cudnn_version.h>
#define ORTC_CUDNN_VERSION                                                 \
  (std::to_string(CUDNN_MAJOR) + "." + std::to_string(CUDNN_MINOR) + "." + \
   std::to_string(CUDNN_PATCHLEVEL))
#endif
#if defined(ORTC_HAVE_CUDA_HEADERS) && __has_include(<cublas_api.h>)
#include <cublas_api.h>
#define ORTC_CUBLAS_VERSION                                                          \
  (std::to_string(CUBLAS_VER_MAJOR) + "." + std::to_string(CUBLAS_VER_MINOR) + "." + \
   std::to_string(CUBLAS_VER_PATCH))
#endif

namespace ortc::backends::cuda {

BinaryIdentity CudaIdentity(const CudaOptions& options) {
  BinaryIdentity id;
#ifdef ORTC_CUDA_VERSION
  const int cuda = ORTC_CUDA_VERSION;  // 13000 for 13.0
  const std::string toolkit = std::to_string(cuda / 1000) + "." + std::to_string(cuda % 1000 / 10);
  // cubins and PTX built by toolkit X.Y need a driver that supports CUDA X.Y; the driver
  // reports that as cuDriverGetVersion() = X * 1000 + Y * 10.
  const std::string min_driver = std::to_string(cuda / 10 * 10);
#else
  const std::string toolkit = "unknown", min_driver = "unknown";
#endif
  std::string nvrtc = "unavailable";
  if (auto info = toolchain::LoadNvrtc(); info.ok())
    nvrtc = std::to_string(info->major) + "." + std::to_string(info->minor);
  id.sdk_version = "CUDA " + toolkit;
  namespace k = ortc::cuda_keys;
  id.versions = {
      {k::kToolkitVersion, toolkit}, {k::kNvrtcVersion, nvrtc}, {k::kMinDriver, min_driver}};
#ifdef ORTC_CUDNN_VERSION
  id.versions.push_back({k::kCudnnVersion, ORTC_CUDNN_VERSION});
#endif
#ifdef ORTC_CUBLAS_VERSION
  id.versions.push_back({k::kCublasVersion, ORTC_CUBLAS_VERSION});
#endif
  id.versions.push_back({k::kPrecision, PrecisionName(options.precision)});
  id.versions.push_back({k::kLayout, options.precision == Precision::kFp32 ? "nchw" : "nhwc"});
  id.hardware_targets = options.cubin_archs;
  id.hardware_targets.push_back(options.ptx_arch);
  for (const auto& t : id.hardware_targets)
    id.hardware_architecture += (id.hardware_architecture.empty() ? "" : ",") + t;
  return id;
}

}  // namespace ortc::backends::cuda
