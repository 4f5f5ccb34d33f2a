// ONNX's element types in one table: their names, their sizes, and which of them the runtime
// holds in a tensor. The compiler, the runtime, the backends and the validators of every binary
// read sizes and names from here, so that no two parts of ortc disagree about a type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ortc {

// One element type, numbered as ONNX's TensorProto.DataType.
struct ElementTypeInfo {
  int32_t code;
  const char* name;  // ONNX's name, lower case ("float16", "float8e4m3fn")
  int bits;          // bits per element; 0 for strings (no fixed size)
  bool held;         // the runtime holds it in a Tensor and its kernels read it
  bool floating;     // a floating-point type (float8 and float4 included)
};

// The entry for `code`, or nullptr for a number ONNX does not define (as far as ortc knows).
const ElementTypeInfo* FindElementType(int32_t code);

// Bits per element of any type ONNX defines with a fixed size (4 for int4, 128 for complex128);
// 0 for strings, undefined and unknown numbers.
int64_t ElementBits(int32_t code);

// Bytes per element of a type the runtime holds (the ones ortc::DataType names, strings aside);
// 0 for any other: strings, sub-byte, float8 and complex types, unknown numbers. Programs and
// tensors stored for the runtime use these types only.
size_t HeldElementBytes(int32_t code);

// Whether it is a floating-point type (float16, bfloat16, float8 and float4 included).
bool IsFloatElementType(int32_t code);

// "float", "int64", ...; "dtype#N" for a number ONNX does not define.
std::string ElementTypeName(int32_t code);

// Calls f(T{}) with the C++ type of a numeric element type the runtime computes on in host code
// (float, double, the signed and unsigned integers of 8 to 64 bits, bool) and returns true; returns
// false for any other (float16 and bfloat16 have no C++ arithmetic type here, strings none at all).
template <typename F>
bool VisitNumericType(int32_t code, F&& f) {
  switch (code) {
    case 1:
      f(float{});
      return true;
    case 11:
      f(double{});
      return true;
    case 7:
      f(int64_t{});
      return true;
    case 6:
      f(int32_t{});
      return true;
    case 5:
      f(int16_t{});
      return true;
    case 3:
      f(int8_t{});
      return true;
    case 13:
      f(uint64_t{});
      return true;
    case 12:
      f(uint32_t{});
      return true;
    case 4:
      f(uint16_t{});
      return true;
    case 2:
      f(uint8_t{});
      return true;
    case 9:
      f(bool{});
      return true;
    default:
      return false;
  }
}

}  // namespace ortc
