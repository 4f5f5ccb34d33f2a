// ONNX TensorProto -> Tensor, including external data (resolved inside the model's folder).
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>

#include "ortc/status.h"
#include "ortc/tensor.h"

namespace ortc::loader {

// `base_dir` is the folder external data paths are relative to; nullptr when unknown.
Result<Tensor> TensorFromProto(const onnx::TensorProto& t, const std::filesystem::path* base_dir);
onnx::TensorProto TensorToProto(const Tensor& t, const std::string& name);

}  // namespace ortc::loader
