// Helpers shared by CPU kernels: type dispatch, half-precision conversion, broadcasting,
// axis normalisation, reading small integer inputs.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "base/shape_limit.h"
#include "kernels/kernel.h"

namespace ortc::exec {

// IEEE binary16 and bfloat16 stored as uint16.
float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);
inline float Bf16ToFloat(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint16_t FloatToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffff) > 0x7f800000) return 0x7fc0;  // NaN
  u += 0x7fff + ((u >> 16) & 1);                     // round to nearest even
  return static_cast<uint16_t>(u >> 16);
}

// Element read/write in double for generic kernels (exact for all but 64-bit integers > 2^53).
double ReadAsDouble(const Tensor& t, int64_t i);
void WriteFromDouble(Tensor& t, int64_t i, double v);
// Element i of an integer tensor as 64 bits (signed types sign-extended), and a 64-bit value
// written truncated to the element type: bitwise ops work on the bits, which a round trip
// through double loses above 2^53 and cannot convert back for negative or 2^64-sized values.
uint64_t ReadBits(const Tensor& t, int64_t i);
void WriteBits(Tensor& t, int64_t i, uint64_t v);
bool IsIntegerType(DataType t);

// Calls f(T{}) for the C++ type of a numeric dtype (not float16/bfloat16/string).
template <typename F>
bool DispatchNumeric(DataType dt, F&& f) {
  switch (dt) {
    case DataType::kFloat:
      f(float{});
      return true;
    case DataType::kDouble:
      f(double{});
      return true;
    case DataType::kInt64:
      f(int64_t{});
      return true;
    case DataType::kInt32:
      f(int32_t{});
      return true;
    case DataType::kInt16:
      f(int16_t{});
      return true;
    case DataType::kInt8:
      f(int8_t{});
      return true;
    case DataType::kUint64:
      f(uint64_t{});
      return true;
    case DataType::kUint32:
      f(uint32_t{});
      return true;
    case DataType::kUint16:
      f(uint16_t{});
      return true;
    case DataType::kUint8:
      f(uint8_t{});
      return true;
    case DataType::kBool:
      f(bool{});
      return true;
    default:
      return false;
  }
}

bool IsFloatType(DataType t);

std::vector<int64_t> Strides(const std::vector<int64_t>& shape);
int64_t Product(const std::vector<int64_t>& v, size_t from = 0, size_t to = SIZE_MAX);
// Numpy broadcast of shapes; nullopt when incompatible.
std::optional<std::vector<int64_t>> BroadcastShape(const std::vector<std::vector<int64_t>>& shapes);
// For each input, its element strides over the broadcast output (0 on broadcast dims).
std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& in_shape,
                                      const std::vector<int64_t>& out_shape);

// Normalises axis into [0, rank); false when out of range.
bool NormaliseAxis(int64_t& axis, int64_t rank);
// Slice's ONNX semantics on one axis of length dim: the first index taken, the step and how
// many elements. start and end are clamped as the specification says (per the sign of step), and a
// step longer than dim is shortened to dim (it takes the same one element), so no value of the
// int64 arguments overflows. step must not be 0.
struct SliceAxis {
  int64_t begin = 0, step = 1, count = 0;
};
SliceAxis ResolveSliceAxis(int64_t dim, int64_t start, int64_t end, int64_t step);
// Reads a 0-D/1-D integer tensor (int32 or int64).
std::optional<std::vector<int64_t>> IntsOf(const Tensor* t);
// The first element of an integer tensor (TopK's k, CumSum's axis): nullopt when t is absent,
// empty or not int32/int64.
std::optional<int64_t> FirstIntOf(const Tensor* t);

// Walks all indices of `shape`, calling f(linear index, offsets into each strided operand).
template <typename F>
void ForEachBroadcast(const std::vector<int64_t>& shape,
                      const std::vector<std::vector<int64_t>>& strides, F&& f) {
  const size_t rank = shape.size();
  const int64_t total = Product(shape);
  const size_t n = strides.size();
  std::vector<int64_t> coord(rank, 0), off(n, 0);
  for (int64_t i = 0; i < total; ++i) {
    f(i, off);
    for (size_t d = rank; d-- > 0;) {
      ++coord[d];
      for (size_t k = 0; k < n; ++k) off[k] += strides[k][d];
      if (coord[d] < shape[d]) break;
      for (size_t k = 0; k < n; ++k) off[k] -= strides[k][d] * coord[d];
      coord[d] = 0;
    }
  }
}

}  // namespace ortc::exec
