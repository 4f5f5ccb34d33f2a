// Reading and writing tensors as .npy (NumPy format 1.0/2.0) and ONNX TensorProto .pb files.
#pragma once

#include <filesystem>

#include "ortc/status.h"
#include "ortc/tensor.h"

namespace ortc::io {

// Picks the format by extension: .npy or .pb.
Result<Tensor> ReadTensorFile(const std::filesystem::path& path);
Status WriteTensorFile(const std::filesystem::path& path, const Tensor& t,
                       const std::string& name = "");

// An ONNX SequenceProto or OptionalProto .pb file (ONNX test data for sequence and optional
// inputs and outputs), as a sequence Tensor, an empty optional, or the optional's value.
Result<Tensor> ReadSequenceFile(const std::filesystem::path& path);
Result<Tensor> ReadOptionalFile(const std::filesystem::path& path);

// Writes a sequence as an ONNX SequenceProto, an empty optional as an empty OptionalProto
// (.pb files whatever the extension asked for; `path` gets the .pb extension).
Status WriteContainerFile(const std::filesystem::path& path, const Tensor& value,
                          const std::string& name);

Result<Tensor> ReadNpy(const std::filesystem::path& path);
Status WriteNpy(const std::filesystem::path& path, const Tensor& t);

}  // namespace ortc::io
