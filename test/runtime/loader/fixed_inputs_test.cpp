// Inputs fixed at compile time (--input-value): the ctx model's record is read strictly, and a
// run must feed exactly the recorded value.
#include <catch2/catch.hpp>

#include "loader/fixed_inputs.h"

using namespace ortc;

namespace {

onnx::ModelProto WithRecord(const std::string& value) {
  onnx::ModelProto m;
  auto* p = m.add_metadata_props();
  p->set_key("ortc.input_values");
  p->set_value(value);
  return m;
}

Tensor Int64(int64_t v) {
  return Tensor::FromBytes(DataType::kInt64, {}, &v, sizeof v);
}

}  // namespace

TEST_CASE("fixed inputs are read from the ctx model's metadata", "[fixed_inputs]") {
  auto fixed = loader::ReadFixedInputs(WithRecord("sr=int64:16000;gain=float:0.5"));
  REQUIRE(fixed.ok());
  REQUIRE(fixed->size() == 2);
  CHECK(fixed->at("sr").dtype == DataType::kInt64);
  CHECK(fixed->at("sr").value == 16000);
  CHECK(fixed->at("gain").value == 0.5);
  CHECK(loader::ReadFixedInputs(onnx::ModelProto{})->empty());
}

TEST_CASE("a malformed record is an invalid model, not a guess", "[fixed_inputs]") {
  for (const char* bad : {"sr=16000", "sr=int64:", "sr=int64:16k", "sr=complex:1", "=:"}) {
    auto fixed = loader::ReadFixedInputs(WithRecord(bad));
    INFO(bad);
    REQUIRE_FALSE(fixed.ok());
    CHECK(fixed.status().code() == StatusCode::kInvalidGraph);
  }
}

TEST_CASE("a run must feed the fixed value", "[fixed_inputs]") {
  const auto fixed = loader::ReadFixedInputs(WithRecord("sr=int64:16000"))->at("sr");
  CHECK(loader::CheckFixedInput("sr", fixed, Int64(16000)).ok());
  const Status other = loader::CheckFixedInput("sr", fixed, Int64(8000));
  REQUIRE_FALSE(other.ok());
  CHECK_THAT(other.message(),
             Catch::Contains("fixed to 16000") && Catch::Contains("--input-value sr=<value>"));
  const int32_t narrow = 16000;
  CHECK_FALSE(
      loader::CheckFixedInput("sr", fixed, Tensor::FromBytes(DataType::kInt32, {}, &narrow, 4))
          .ok());
  CHECK_FALSE(loader::CheckFixedInput("sr", fixed, Tensor::Sequence(DataType::kInt64, {})).ok());
}
