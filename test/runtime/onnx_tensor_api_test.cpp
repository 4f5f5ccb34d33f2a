// The runtime's API for what the commands used to read from its internals: ONNX tensors from
// serialized TensorProto bytes, and the CPU kernels' math library.
#include <onnx/onnx_pb.h>
#include <catch2/catch.hpp>

#include <regex>

#include "ortc/runtime.h"
#include "ortc/tensor.h"

using namespace ortc;

namespace {
Result<Tensor> Parse(const onnx::TensorProto& p) {
  const std::string bytes = p.SerializeAsString();
  return TensorFromOnnxBytes(bytes.data(), bytes.size());
}
}  // namespace

TEST_CASE("ONNX tensors are read from their serialized bytes", "[tensor]") {
  onnx::TensorProto raw;
  raw.set_data_type(onnx::TensorProto::FLOAT);
  raw.add_dims(2);
  raw.add_dims(1);
  const float values[2] = {1.5f, -2.0f};
  raw.set_raw_data(std::string(reinterpret_cast<const char*>(values), sizeof values));
  auto t = Parse(raw);
  REQUIRE(t.ok());
  CHECK(t->dtype() == DataType::kFloat);
  CHECK(t->shape() == std::vector<int64_t>{2, 1});
  CHECK(t->data<float>()[0] == 1.5f);
  CHECK(t->data<float>()[1] == -2.0f);

  onnx::TensorProto typed;  // the typed field instead of raw bytes
  typed.set_data_type(onnx::TensorProto::INT64);
  typed.add_dims(3);
  for (int64_t v : {7, -8, 9}) typed.add_int64_data(v);
  auto i = Parse(typed);
  REQUIRE(i.ok());
  CHECK(i->dtype() == DataType::kInt64);
  CHECK(i->data<int64_t>()[1] == -8);

  const char garbage[] = "\xff\xff\xff\xff not a proto";
  auto bad = TensorFromOnnxBytes(garbage, sizeof garbage);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == StatusCode::kInvalidArgument);

  onnx::TensorProto ext = raw;  // external data needs a folder, which bytes alone do not have
  ext.clear_raw_data();
  ext.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* loc = ext.add_external_data();
  loc->set_key("location");
  loc->set_value("w.bin");
  CHECK_FALSE(Parse(ext).ok());
}

TEST_CASE("a tensor written as ONNX bytes reads back the same", "[tensor]") {
  Tensor t = Tensor::Allocate(DataType::kInt32, {2, 2});
  for (int i = 0; i < 4; ++i) t.mutable_data<int32_t>()[i] = i * i - 3;
  const std::string bytes = TensorToOnnxBytes(t, "y");
  onnx::TensorProto p;
  REQUIRE(p.ParseFromString(bytes));
  CHECK(p.name() == "y");
  CHECK(p.data_type() == onnx::TensorProto::INT32);
  auto back = TensorFromOnnxBytes(bytes.data(), bytes.size());
  REQUIRE(back.ok());
  CHECK(back->shape() == std::vector<int64_t>{2, 2});
  CHECK(back->data<int32_t>()[0] == -3);
  CHECK(back->data<int32_t>()[3] == 6);
}

TEST_CASE("the CPU kernels' library describes itself", "[runtime]") {
  const CpuKernelLibrary lib = DescribeCpuKernelLibrary();
  CHECK(lib.name == "oneDNN");
  CHECK(std::regex_match(lib.version, std::regex(R"(\d+\.\d+\.\d+)")));
  CHECK(std::regex_match(lib.isa, std::regex(R"(|avx2|avx512_core(_bf16|_amx)?)")));
}
