// The names the CUDA context binary uses in its manifest (backend_versions, hardware_targets,
// properties): one definition shared by the compiler that writes them and the runtime that gates.
#pragma once

namespace ortc::cuda_keys {

// Manifest.backend and the EPContext `source` ("ortc." + kBackend).
inline constexpr const char* kBackend = "cuda";

// Manifest.backend_versions keys.
inline constexpr const char* kToolkitVersion = "cuda.toolkit";  // "13.0"
inline constexpr const char* kNvrtcVersion = "cuda.nvrtc";      // "13.0"
// Minimum driver the cubins/PTX need, in cuDriverGetVersion's format (1000*major + 10*minor):
// "13000" is CUDA 13.0.
inline constexpr const char* kMinDriver = "cuda.min_driver";
// Library versions the programs were planned against, "major.minor.patch". Absent when no
// program of the binary calls that library (the gate then does not require it).
inline constexpr const char* kCudnnVersion = "cudnn";        // "9.x.y"
inline constexpr const char* kCublasVersion = "cublas";      // "13.x.y"
inline constexpr const char* kPrecision = "cuda.precision";  // "fp32" | "fp16" | "bf16"
inline constexpr const char* kLayout = "cuda.layout";        // "nchw" | "nhwc"

// Manifest.hardware_targets: "sm_XY" for a cubin, "compute_XY" for PTX (JIT-compiled by the
// driver on devices of that compute capability or newer).
inline constexpr const char* kCubinPrefix = "sm_";
inline constexpr const char* kPtxPrefix = "compute_";

}  // namespace ortc::cuda_keys
