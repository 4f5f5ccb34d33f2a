// Kernel tests' shorthand for one ai.onnx op on host tensors through ortc::RunCpuOp: a tensor
// from values, and a run with integer attributes by name that requires success.
#pragma once

#include <onnx/onnx_pb.h>
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "ortc/runtime.h"

namespace ortc::test {

template <typename T>
Tensor HostTensor(DataType dtype, std::vector<int64_t> shape, const std::vector<T>& values) {
  return Tensor::FromBytes(dtype, std::move(shape), values.data(), values.size() * sizeof(T));
}

inline std::vector<Tensor> RunOp(
    const std::string& op_type, int opset, std::vector<const Tensor*> inputs,
    const std::vector<std::pair<std::string, int64_t>>& int_attributes = {},
    size_t num_outputs = 1) {
  onnx::NodeProto node;
  for (const auto& [name, value] : int_attributes) {
    auto* attr = node.add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::INT);
    attr->set_i(value);
  }
  CpuOpCall call;
  call.op_type = op_type;
  call.opset = opset;
  call.attributes = node.SerializeAsString();
  call.inputs = std::move(inputs);
  call.num_outputs = num_outputs;
  auto r = RunCpuOp(call);
  REQUIRE(r.ok());
  return std::move(*r);
}

}  // namespace ortc::test
