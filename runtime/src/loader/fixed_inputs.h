// Inputs the compiler fixed with --input-value: the ctx model records them under the metadata
// key "ortc.input_values" ("sr=int64:16000;gain=float:0.5"), and a run must feed exactly those
// values, because the compiled graph was specialised to them.
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <string>

#include "ortc/status.h"
#include "ortc/tensor.h"

namespace ortc::loader {

struct FixedInput {
  DataType dtype = DataType::kUndefined;
  double value = 0;
  std::string text;  // as recorded, for messages
};

// The fixed inputs a ctx model records (empty when none); an error for a malformed record.
Result<std::map<std::string, FixedInput>> ReadFixedInputs(const onnx::ModelProto& model);

// Ok when `fed` is a one-element tensor of the fixed type holding the fixed value.
Status CheckFixedInput(const std::string& name, const FixedInput& fixed, const Tensor& fed);

}  // namespace ortc::loader
