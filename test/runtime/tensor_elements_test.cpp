// The runtime's API for reading and writing any numeric tensor's elements as double (what
// `ortc run`, `ortc verify` and the random inputs use): each type's conversion, against values
// worked out here by hand.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>

#include "ortc/tensor.h"

using namespace ortc;

TEST_CASE("elements read as double are exact, float16 and bfloat16 included", "[tensor]") {
  Tensor f16 = Tensor::Allocate(DataType::kFloat16, {2});
  f16.mutable_data<uint16_t>()[0] = 0x3e00;  // 1.5
  f16.mutable_data<uint16_t>()[1] = 0x0001;  // the smallest subnormal, 2^-24
  CHECK(ElementAsDouble(f16, 0) == 1.5);
  CHECK(ElementAsDouble(f16, 1) == std::ldexp(1.0, -24));
  Tensor bf16 = Tensor::Allocate(DataType::kBfloat16, {1});
  bf16.mutable_data<uint16_t>()[0] = 0xc040;  // -3
  CHECK(ElementAsDouble(bf16, 0) == -3.0);
  Tensor i64 = Tensor::Allocate(DataType::kInt64, {1});
  i64.mutable_data<int64_t>()[0] = -(int64_t{1} << 52) - 1;
  CHECK(ElementAsDouble(i64, 0) == -4503599627370497.0);
  Tensor u8 = Tensor::Allocate(DataType::kUint8, {1});
  u8.mutable_data<uint8_t>()[0] = 200;
  CHECK(ElementAsDouble(u8, 0) == 200.0);
  Tensor strings = Tensor::Allocate(DataType::kString, {1});
  CHECK(ElementAsDouble(strings, 0) == 0.0);
}

TEST_CASE("elements written from double round floats and wrap integers", "[tensor]") {
  Tensor f16 = Tensor::Allocate(DataType::kFloat16, {2});
  SetElementFromDouble(f16, 0, 1.0 + std::ldexp(1.0, -11));  // halfway: to even, 1.0
  SetElementFromDouble(f16, 1, 70000.0);                     // beyond 65504: infinity
  CHECK(f16.data<uint16_t>()[0] == 0x3c00);
  CHECK(f16.data<uint16_t>()[1] == 0x7c00);
  Tensor u8 = Tensor::Allocate(DataType::kUint8, {2});
  SetElementFromDouble(u8, 0, -1.0);  // 1 - 2 in uint8 arithmetic
  SetElementFromDouble(u8, 1, std::numeric_limits<double>::quiet_NaN());
  CHECK(u8.data<uint8_t>()[0] == 255);
  CHECK(u8.data<uint8_t>()[1] == 0);
  Tensor i32 = Tensor::Allocate(DataType::kInt32, {1});
  SetElementFromDouble(i32, 0, -7.9);  // truncated toward zero
  CHECK(i32.data<int32_t>()[0] == -7);
  Tensor i64 = Tensor::Allocate(DataType::kInt64, {1});
  SetElementFromDouble(i64, 0, 1e30);  // saturated
  CHECK(i64.data<int64_t>()[0] == std::numeric_limits<int64_t>::max());
}
