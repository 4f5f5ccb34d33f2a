// ONNX Runtime's model-compatibility strings for ortc bundles: what the version gate checks of
// each binary, written into the ctx model's metadata ("ep_compatibility_info.ortc", the key ONNX
// Runtime reads for the EP named "ortc") by `ortc compile` and by ONNX Runtime's compile API
// through the ortc plugin EP. ONNX Runtime hands the string back to the plugin before loading a
// model, which answers with the gate's verdict without opening a binary:
//   optimal -> EP_SUPPORTED_OPTIMAL, prefer recompilation -> EP_SUPPORTED_PREFER_RECOMPILATION,
//   unsupported (the gate's refusal) -> EP_UNSUPPORTED, not an ortc string -> EP_NOT_APPLICABLE.
// The format is in schemas/README.md.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ortc/runtime.h"

namespace ortc::loader {

inline constexpr const char* kCompatibilityMetadataKey = "ep_compatibility_info.ortc";

// What the gate reads of one binary: its manifest's backend, hardware targets and versions.
struct BinaryFacts {
  std::string backend;
  std::vector<std::string> hardware_targets;
  std::vector<std::pair<std::string, std::string>> versions;
};

// "ortc;format=1.0;cpu=generic-le" or, with CUDA, "...;cuda=sm_90,compute_90;cuda_driver=13000;
// cudnn=9.1.0;cublas=13.0.0".
std::string CompatibilityInfo(const std::vector<BinaryFacts>& binaries);

struct Compatibility {
  enum class Answer { kNotApplicable, kOptimal, kPreferRecompilation, kUnsupported };
  Answer answer = Answer::kNotApplicable;
  std::string reason;  // the gate's words, for the last two
};
Compatibility CheckCompatibility(const std::string& info, const DeviceDescription& device);
// Whether the string names a CUDA binary (the device must then be detected with CUDA).
bool NeedsCuda(const std::string& info);

}  // namespace ortc::loader
