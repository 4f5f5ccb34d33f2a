// The CUDA binary's identity (manifest versions and targets, EPContext ep_sdk_version and
// hardware_architecture). Library versions are those of the headers the compiler was built
// with; the runtime compares majors with what it loads.
#include "cuda/compile/identity.h"

#include "cuda/compile/toolchain/nvrtc.h"
#include "cuda_binary_keys.h"

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
  std::string min_driver_used = min_driver;
  if (auto info = toolchain::LoadNvrtc(); info.ok()) {
    nvrtc = std::to_string(info->major) + "." + std::to_string(info->minor);
    // The NVRTC that builds the modules decides what they need, whatever the headers said.
    min_driver_used = std::to_string(info->major * 1000 + info->minor * 10);
  }
  id.sdk_version = "CUDA " + toolkit;
  namespace k = ortc::cuda_keys;
  id.versions = {
      {k::kToolkitVersion, toolkit}, {k::kNvrtcVersion, nvrtc}, {k::kMinDriver, min_driver_used}};
  id.versions.push_back({k::kPrecision, PrecisionName(options.precision)});
  id.versions.push_back({k::kLayout, UsesTensorCores(options.precision) ? "nhwc" : "nchw"});
  id.hardware_targets = options.cubin_archs;
  id.hardware_targets.push_back(options.ptx_arch);
  for (const auto& t : id.hardware_targets)
    id.hardware_architecture += (id.hardware_architecture.empty() ? "" : ",") + t;
  return id;
}

std::vector<std::pair<std::string, std::string>> LibraryVersions(bool calls_cudnn,
                                                                 bool calls_cublas) {
  std::vector<std::pair<std::string, std::string>> v;
  namespace k = ortc::cuda_keys;
#ifdef ORTC_CUDNN_VERSION
  if (calls_cudnn) v.push_back({k::kCudnnVersion, ORTC_CUDNN_VERSION});
#else
  if (calls_cudnn) v.push_back({k::kCudnnVersion, "unknown"});
#endif
#ifdef ORTC_CUBLAS_VERSION
  if (calls_cublas) v.push_back({k::kCublasVersion, ORTC_CUBLAS_VERSION});
#else
  if (calls_cublas) v.push_back({k::kCublasVersion, "unknown"});
#endif
  return v;
}

}  // namespace ortc::backends::cuda
