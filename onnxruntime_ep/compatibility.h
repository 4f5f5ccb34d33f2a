// ONNX Runtime's model-compatibility strings for ortc bundles. When ONNX Runtime writes a ctx
// model through the ortc EP it stores the string GetCompiledModelCompatibilityInfo returns
// (model metadata "ep_compatibility_info.ortc"); on another machine ValidateCompiledModel-
// CompatibilityInfo turns it back into the version gate's verdict, without opening a binary:
//   optimal -> EP_SUPPORTED_OPTIMAL, prefer recompilation -> EP_SUPPORTED_PREFER_RECOMPILATION,
//   unsupported (the gate's refusal) -> EP_UNSUPPORTED, not an ortc string -> EP_NOT_APPLICABLE.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "format/context_binary_reader.h"
#include "ortc/runtime.h"

namespace ortc::ort_ep {

// "ortc;format=1.0;cpu=generic-le" or, with CUDA, "...;cuda=sm_90,compute_90;cuda_driver=13000;
// cudnn=9.1.0;cublas=13.0.0": what the gate checks of each binary, by backend.
std::string CompatibilityInfo(
    const std::vector<std::pair<std::string, const format::ContextBinary*>>& binaries);

struct Compatibility {
  enum class Answer { kNotApplicable, kOptimal, kPreferRecompilation, kUnsupported };
  Answer answer = Answer::kNotApplicable;
  std::string reason;  // the gate's words, for the last two
};
Compatibility CheckCompatibility(const std::string& info, const DeviceDescription& device);
// Whether the string names a CUDA binary (the device must then be detected with CUDA).
bool NeedsCuda(const std::string& info);

}  // namespace ortc::ort_ep
