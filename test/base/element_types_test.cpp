// The element-type table against what it must agree with: ONNX's own enum (names, and sizes of
// the types the runtime holds), the runtime's DataType, and the C++ types VisitNumericType hands
// out. A row written wrong here would size or name a type wrongly in every part of ortc at once.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <string>

#include "base/element_types.h"
#include "ortc/tensor.h"

using namespace ortc;

TEST_CASE("element type names are ONNX's enum names in lower case", "[element_types]") {
  int named_by_onnx = 0;
  for (int32_t code = 0; code < 64; ++code) {
    if (!onnx::TensorProto_DataType_IsValid(code)) continue;
    std::string onnx_name =
        onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(code));
    std::transform(onnx_name.begin(), onnx_name.end(), onnx_name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    INFO("code " << code);
    CHECK(ElementTypeName(code) == onnx_name);
    ++named_by_onnx;
  }
  CHECK(named_by_onnx >= 17);  // undefined .. bfloat16 in any ONNX this builds against
  CHECK(ElementTypeName(17) == "float8e4m3fn");
  CHECK(ElementTypeName(22) == "int4");
  CHECK(ElementTypeName(-1) == "dtype#-1");
  CHECK(ElementTypeName(99) == "dtype#99");
}

TEST_CASE("element bits follow ONNX's definitions, sub-byte and wide types included",
          "[element_types]") {
  using T = onnx::TensorProto;
  CHECK(ElementBits(T::FLOAT) == 32);
  CHECK(ElementBits(T::DOUBLE) == 64);
  CHECK(ElementBits(T::FLOAT16) == 16);
  CHECK(ElementBits(T::BFLOAT16) == 16);
  CHECK(ElementBits(T::BOOL) == 8);
  CHECK(ElementBits(T::INT64) == 64);
  CHECK(ElementBits(T::UINT32) == 32);
  CHECK(ElementBits(T::COMPLEX64) == 64);
  CHECK(ElementBits(T::COMPLEX128) == 128);
  CHECK(ElementBits(19) == 8);  // float8e5m2
  CHECK(ElementBits(21) == 4);  // uint4
  CHECK(ElementBits(T::STRING) == 0);
  CHECK(ElementBits(T::UNDEFINED) == 0);
  CHECK(ElementBits(-3) == 0);
  CHECK(ElementBits(1000) == 0);
}

TEST_CASE("the runtime holds exactly the types ortc::DataType names", "[element_types]") {
  const DataType held[] = {DataType::kFloat,   DataType::kUint8,  DataType::kInt8,
                           DataType::kUint16,  DataType::kInt16,  DataType::kInt32,
                           DataType::kInt64,   DataType::kBool,   DataType::kFloat16,
                           DataType::kDouble,  DataType::kUint32, DataType::kUint64,
                           DataType::kBfloat16};
  for (DataType t : held) {
    const int32_t code = static_cast<int32_t>(t);
    INFO("code " << code);
    CHECK(HeldElementBytes(code) * 8 == static_cast<size_t>(ElementBits(code)));
    CHECK(ElementSize(t) == HeldElementBytes(code));
    CHECK(DataTypeName(t) == ElementTypeName(code));
  }
  // Types with a size the runtime does not hold: programs and tensors may not store them.
  for (int32_t code : {0, 8, 14, 15, 17, 18, 19, 20, 21, 22, 23, 24, -1}) {
    INFO("code " << code);
    CHECK(HeldElementBytes(code) == 0);
  }
}

TEST_CASE("VisitNumericType hands out a C++ type of the table's size", "[element_types]") {
  int visited = 0;
  for (int32_t code = -1; code < 30; ++code) {
    size_t bytes = 0;
    const bool numeric = VisitNumericType(code, [&](auto zero) { bytes = sizeof(zero); });
    if (!numeric) continue;
    INFO("code " << code);
    CHECK(bytes == HeldElementBytes(code));
    ++visited;
  }
  CHECK(visited == 11);  // float, double, 4 signed and 4 unsigned integers, bool
  CHECK_FALSE(VisitNumericType(10, [](auto) {}));  // float16 has no C++ arithmetic type here
  CHECK_FALSE(VisitNumericType(8, [](auto) {}));   // strings
}

TEST_CASE("floating-point element types are the float, float8 and float4 kinds",
          "[element_types]") {
  for (int32_t code : {1, 10, 11, 16, 17, 18, 19, 20, 23}) {
    INFO("code " << code);
    CHECK(IsFloatElementType(code));
  }
  for (int32_t code : {0, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 14, 15, 21, 22, -1, 99}) {
    INFO("code " << code);
    CHECK_FALSE(IsFloatElementType(code));
  }
}
