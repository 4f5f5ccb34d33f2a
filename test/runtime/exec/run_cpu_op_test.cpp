// ortc::RunCpuOp, the runtime's API the compiler folds constants through: one op on host
// tensors, attributes from a serialized NodeProto, and its refusals.
#include <onnx/onnx_pb.h>
#include <catch2/catch.hpp>

#include "ortc/runtime.h"

using namespace ortc;

namespace {
Tensor Floats(std::vector<int64_t> shape, std::vector<float> v) {
  return Tensor::FromBytes(DataType::kFloat, std::move(shape), v.data(), v.size() * sizeof(float));
}
}  // namespace

TEST_CASE("one op runs on host tensors through the CPU kernels", "[exec]") {
  const Tensor a = Floats({2}, {1.5f, -2.0f});
  const Tensor b = Floats({2}, {0.25f, 4.0f});
  CpuOpCall add;
  add.op_type = "Add";
  add.opset = 14;
  add.inputs = {&a, &b};
  auto sum = RunCpuOp(add);
  REQUIRE(sum.ok());
  REQUIRE(sum->size() == 1);
  CHECK((*sum)[0].data<float>()[0] == 1.75f);
  CHECK((*sum)[0].data<float>()[1] == 2.0f);

  // Attributes come from the serialized node: Transpose [2,3] with perm [1,0] -> [3,2].
  const Tensor m = Floats({2, 3}, {0, 1, 2, 3, 4, 5});
  onnx::NodeProto node;
  auto* perm = node.add_attribute();
  perm->set_name("perm");
  perm->set_type(onnx::AttributeProto::INTS);
  perm->add_ints(1);
  perm->add_ints(0);
  CpuOpCall transpose;
  transpose.op_type = "Transpose";
  transpose.opset = 13;
  transpose.attributes = node.SerializeAsString();
  transpose.inputs = {&m};
  auto t = RunCpuOp(transpose);
  REQUIRE(t.ok());
  CHECK((*t)[0].shape() == std::vector<int64_t>{3, 2});
  CHECK((*t)[0].data<float>()[1] == 3.0f);  // row 0 of the result is column 0: 0, 3
  CHECK((*t)[0].data<float>()[2] == 1.0f);
}

TEST_CASE("ops the CPU kernels cannot run alone are refused", "[exec]") {
  CHECK(HasCpuKernel("Conv"));
  CHECK_FALSE(HasCpuKernel("NoSuchOp"));
  CpuOpCall unknown;
  unknown.op_type = "NoSuchOp";
  CHECK(RunCpuOp(unknown).status().code() == StatusCode::kNotImplemented);

  const Tensor a = Floats({4}, {1, 2, 3, 4});
  CpuOpCall big;  // an output over the limit
  big.op_type = "Add";
  big.opset = 14;
  big.inputs = {&a, &a};
  big.max_output_bytes = 8;
  CHECK_FALSE(RunCpuOp(big).ok());

  CpuOpCall garbled = big;
  garbled.max_output_bytes = 0;
  garbled.attributes = "\xff\xff not a node";
  CHECK(RunCpuOp(garbled).status().code() == StatusCode::kInvalidArgument);
}
