// Helpers shared by CPU kernels: type dispatch, elements read and written as double or bits,
// reading small integer inputs. Half-precision conversion and shape arithmetic come from base/
// (half_float.h, shape_math.h), which the compile side uses too.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "base/element_types.h"
#include "base/half_float.h"
#include "base/shape_limit.h"
#include "base/shape_math.h"
#include "cpu_kernel/kernel_context.h"

namespace ortc::exec {

// Elements read and written as double: ElementAsDouble and SetElementFromDouble (ortc/tensor.h).
// Element i of an integer tensor as 64 bits (signed types sign-extended), and a 64-bit value
// written truncated to the element type: bitwise ops work on the bits, which a round trip
// through double loses above 2^53 and cannot convert back for negative or 2^64-sized values.
uint64_t ReadBits(const Tensor& t, int64_t i);
void WriteBits(Tensor& t, int64_t i, uint64_t v);
bool IsIntegerType(DataType t);

// Calls f(T{}) for the C++ type of a numeric dtype (not float16/bfloat16/string): the table's
// VisitNumericType, for a runtime DataType.
template <typename F>
bool DispatchNumeric(DataType dt, F&& f) {
  return VisitNumericType(static_cast<int32_t>(dt), std::forward<F>(f));
}

bool IsFloatType(DataType t);

// A broadcast over a non-empty `shape` walked a row of its last axis at a time:
// f(row, offsets, steps, length) per row, offsets[k] the first element operand k reads in that
// row and steps[k] its stride along the row (0 where it is broadcast). The row loops in f stay
// tight and vectorise, where ForEachBroadcast calls back per element.
template <typename F>
void ForEachBroadcastRow(const std::vector<int64_t>& shape,
                         std::vector<std::vector<int64_t>> strides, F f) {
  std::vector<int64_t> steps;
  for (auto& s : strides) {
    steps.push_back(s.back());
    s.pop_back();
  }
  const int64_t length = shape.back();
  const std::vector<int64_t> outer(shape.begin(), shape.end() - 1);
  ForEachBroadcast(outer, strides, [&](int64_t row, const std::vector<int64_t>& offsets) {
    f(row, offsets, steps, length);
  });
}

// Copies element `src_i` of `src` to element `dst_i` of `dst` (any type, strings included).
void CopyElement(const Tensor& src, int64_t src_i, Tensor& dst, int64_t dst_i);

// A float row's sum in double, kept in eight partial results: eight independent chains instead
// of one as long as the row (a 128-long row's double additions were a dependency chain of 512
// cycles), and vectorisable. Softmax has its own per-ISA row function (vector_math.h).
double RowSum(const float* x, int64_t n);

// Reads a 0-D/1-D integer tensor (int32 or int64).
std::optional<std::vector<int64_t>> IntsOf(const Tensor* t);
// The first element of an integer tensor (TopK's k, CumSum's axis): nullopt when t is absent,
// empty or not int32/int64.
std::optional<int64_t> FirstIntOf(const Tensor* t);

}  // namespace ortc::exec
