// ONNX Runtime's model-compatibility string for ortc bundles: what the version gate checks of
// each binary, written into the ctx model's metadata ("ep_compatibility_info.ortc", the key ONNX
// Runtime reads for the EP named "ortc") by `ortc compile` and by ONNX Runtime's compile API
// through the ortc plugin EP, and read back here. The format is in schemas/README.md; the
// verdict on a string is the runtime's (runtime/src/loader/compatibility_check.h).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "context_binary_generated.h"

namespace ortc::format {

inline constexpr const char* kCompatibilityMetadataKey = "ep_compatibility_info.ortc";

// What the gate reads of one binary: its manifest's backend, hardware targets and versions.
struct BinaryFacts {
  std::string backend;
  std::vector<std::string> hardware_targets;
  std::vector<std::pair<std::string, std::string>> versions;
};

// What the CUDA gate reads from a binary's manifest (schemas/cuda_binary_keys.h).
struct CudaBinaryFacts {
  int min_driver = 0;                         // cuDriverGetVersion format; 0 when not recorded
  std::vector<std::string> targets;           // "sm_80" (cubin), "compute_90" (PTX)
  std::string cudnn_version, cublas_version;  // empty when the programs do not call the library
};
CudaBinaryFacts CudaFactsOf(const fb::Manifest& manifest);
// The same from the manifest's contents: its backend versions and hardware targets.
CudaBinaryFacts CudaFactsOf(const std::vector<std::pair<std::string, std::string>>& versions,
                            const std::vector<std::string>& hardware_targets);

// "ortc;format=1.0;cpu=generic-le" or, with CUDA, "...;cuda=sm_90,compute_90;cuda_driver=13000;
// cudnn=9.1.0;cublas=13.0.0". A backend that lives in a plugin (an NPU's) adds its hardware
// targets and every manifest version, for its plugin to judge: "...;npu=npu-sim-v1;
// npu.npu_sdk=1.0" (a version whose text holds ';' or '=' is left out).
std::string CompatibilityInfo(const std::vector<BinaryFacts>& binaries);

// A compatibility string read back. Fields it does not know are ignored; a later duplicate wins.
struct ParsedCompatibility {
  bool ours = false;   // starts with "ortc"; nothing else is set otherwise
  std::string format;  // "1.0", or "" when missing
  bool has_cpu = false;
  std::vector<std::string> cpu_targets;
  bool has_cuda = false;
  CudaBinaryFacts cuda;
  std::vector<BinaryFacts> plugins;  // backends other than cpu and cuda, in the string's order
};
ParsedCompatibility ParseCompatibilityInfo(const std::string& info);

// Whether the string names a CUDA binary (the device must then be detected with CUDA).
bool NeedsCuda(const std::string& info);

}  // namespace ortc::format
