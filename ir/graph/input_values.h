// `--input-value name=16000`: fixes a scalar graph input's value at compile time, so the
// computations on it fold and an If choosing its branch from it is resolved (graph/if_inlining.h).
// The ctx model keeps the input, so callers feed it as before, and records the value under the
// metadata key below; the runtime refuses a run that feeds another value.
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ortc/status.h"

namespace ortc::graph {

inline constexpr const char* kInputValuesMetadataKey = "ortc.input_values";

using InputValues = std::map<std::string, std::string>;  // name -> value text

// Parses "name=value" (or a comma-separated list of them) into `out`; a name given twice is an
// error.
Status ParseInputValue(const std::string& text, InputValues* out);

// An input the compile fixed: its declaration (re-added to the ctx model at `position`) and the
// value as "<dtype>:<number>".
struct FixedInput {
  onnx::ValueInfoProto declaration;
  int position = 0;
  std::string value;
};

// Turns each named input into an initializer holding its value (typed as the input declares:
// a scalar or a one-element tensor of bool, int32, int64, float or double). Errors name the
// input and say what is wrong (unknown name with the list of inputs, a non-scalar input, a value
// that does not parse as the input's type). With `applied` (weight-sharing groups), names the
// model does not have are skipped.
Result<std::vector<FixedInput>> ApplyInputValues(const InputValues& values, onnx::GraphProto* graph,
                                                 std::set<std::string>* applied = nullptr);

// The metadata value for a compile's fixed inputs: "sr=int64:16000;gain=float:0.5".
std::string InputValuesMetadata(const std::vector<FixedInput>& fixed);

}  // namespace ortc::graph
