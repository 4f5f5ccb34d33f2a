// ortc::TensorFromOnnxBytes and TensorToOnnxBytes: the runtime's reader and writer of ONNX tensors,
// for callers that must not depend on protobuf themselves (the commands read ONNX's .pb test data
// through it).
#include <onnx/onnx_pb.h>

#include <limits>

#include "loader/tensor_proto.h"
#include "ortc/tensor.h"

namespace ortc {

Result<Tensor> TensorFromOnnxBytes(const void* data, size_t size) {
  if (size > static_cast<size_t>(std::numeric_limits<int>::max()))
    return InvalidArgument("a serialized TensorProto over 2 GiB cannot be parsed");
  onnx::TensorProto proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size)))
    return InvalidArgument("not a serialized ONNX TensorProto");
  return loader::TensorFromProto(proto, nullptr);
}

std::string TensorToOnnxBytes(const Tensor& t, const std::string& name) {
  return loader::TensorToProto(t, name).SerializeAsString();
}

}  // namespace ortc
