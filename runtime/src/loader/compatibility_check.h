// The version gate's verdict on an ONNX Runtime compatibility string (its format and writer are
// schemas/format/compatibility_info.h). ONNX Runtime hands the string back to the ortc plugin EP
// before loading a model, which answers with this verdict without opening a binary:
//   optimal -> EP_SUPPORTED_OPTIMAL, prefer recompilation -> EP_SUPPORTED_PREFER_RECOMPILATION,
//   unsupported (the gate's refusal) -> EP_UNSUPPORTED, not an ortc string -> EP_NOT_APPLICABLE.
#pragma once

#include <string>

#include "format/compatibility_info.h"
#include "ortc/runtime.h"

namespace ortc::loader {

struct Compatibility {
  enum class Answer { kNotApplicable, kOptimal, kPreferRecompilation, kUnsupported };
  Answer answer = Answer::kNotApplicable;
  std::string reason;  // the gate's words, for the last two
};
Compatibility CheckCompatibility(const std::string& info, const DeviceDescription& device);

}  // namespace ortc::loader
