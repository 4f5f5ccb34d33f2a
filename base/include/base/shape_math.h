// Arithmetic on shapes that kernels and compilers share: strides, element counts, numpy
// broadcasting, axis normalisation and Slice's per-axis semantics.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace ortc::exec {

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
