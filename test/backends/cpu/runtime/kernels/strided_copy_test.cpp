// StridedCopy (Transpose, Slice and Expand's data movement) against the definition walked one
// element at a time: every permutation of a 4-D tensor, reversed and stepped slices, broadcast
// axes, size-1 and empty axes, element sizes 1 to 8 and an odd one, and a copy large enough to
// be split over threads.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "cpu/runtime/kernels/strided_copy.h"

using ortc::exec::StridedCopy;

namespace {

// dst[i] = src[base + sum coord_d * strides[d]], element by element.
std::vector<unsigned char> Reference(const std::vector<unsigned char>& src, int64_t base,
                                     const std::vector<int64_t>& shape,
                                     const std::vector<int64_t>& strides, size_t es) {
  int64_t total = 1;
  for (int64_t d : shape) total *= d;
  std::vector<unsigned char> dst(static_cast<size_t>(total) * es);
  std::vector<int64_t> coord(shape.size(), 0);
  for (int64_t i = 0; i < total; ++i) {
    int64_t off = base;
    for (size_t d = 0; d < shape.size(); ++d) off += coord[d] * strides[d];
    std::memcpy(&dst[static_cast<size_t>(i) * es], &src[static_cast<size_t>(off) * es], es);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++coord[d] < shape[d]) break;
      coord[d] = 0;
    }
  }
  return dst;
}

std::vector<unsigned char> Bytes(size_t n) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>((i * 131 + 7) % 251);
  return v;
}

void Check(const std::vector<unsigned char>& src, int64_t base, const std::vector<int64_t>& shape,
           const std::vector<int64_t>& strides, size_t es) {
  const auto want = Reference(src, base, shape, strides, es);
  std::vector<unsigned char> got(want.size() + 1, 0xAB);  // one guard byte past the end
  StridedCopy(src.data(), base, shape, strides, es, got.data());
  CHECK(std::equal(want.begin(), want.end(), got.begin()));
  CHECK(got.back() == 0xAB);
}

}  // namespace

TEST_CASE("strided copy transposes by every permutation, any element size", "[kernels]") {
  const std::vector<int64_t> dims = {2, 3, 4, 5};
  const std::vector<int64_t> dense = {60, 20, 5, 1};
  for (size_t es : {1, 2, 3, 4, 8}) {
    const auto src = Bytes(120 * es);
    std::vector<int> perm = {0, 1, 2, 3};
    do {
      std::vector<int64_t> shape, strides;
      for (int p : perm) {
        shape.push_back(dims[p]);
        strides.push_back(dense[p]);
      }
      Check(src, 0, shape, strides, es);
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

TEST_CASE("strided copy slices with steps, reversals and a start offset", "[kernels]") {
  const auto src = Bytes(6 * 7 * 8 * 4);
  // [6, 7, 8] floats: rows 1.., every second column reversed from 6, last axis 2..7
  Check(src, 1 * 56 + 6 * 8 + 2, {5, 3, 5}, {56, -16, 1}, 4);
  // the last axis reversed with step 3, the others whole
  Check(src, 7, {6, 7, 3}, {56, 8, -3}, 4);
  // one column of each row (a stride-8 run)
  Check(src, 3, {6, 7}, {56, 8}, 4);
}

TEST_CASE("strided copy broadcasts over stride-0 axes and skips size-1 ones", "[kernels]") {
  const auto src = Bytes(2 * 1 * 16 * 8 * 8);  // bytes for 8-byte elements
  // GQA's repeat: [2, 1, 16, 8] expanded to [2, 3, 16, 8] (the head axis broadcast)
  Check(src, 0, {2, 3, 16, 8}, {128, 0, 8, 1}, 8);
  // a row broadcast down a matrix, and a single value filled everywhere
  Check(src, 5, {9, 4}, {0, 1}, 4);
  Check(src, 5, {3, 1, 7}, {0, 0, 0}, 2);
  // only size-1 axes: one element; no axis: a scalar
  Check(src, 9, {1, 1, 1}, {4, 2, 1}, 4);
  Check(src, 9, {}, {}, 4);
}

TEST_CASE("strided copy writes nothing for an empty shape", "[kernels]") {
  const auto src = Bytes(16);
  unsigned char guard = 0xCD;
  StridedCopy(src.data(), 0, {3, 0, 2}, {2, 1, 1}, 4, &guard);
  CHECK(guard == 0xCD);
}

TEST_CASE("a strided copy split over threads gives the same bytes", "[kernels]") {
  // [8, 64, 96] floats transposed to [96, 8, 64] and to [64, 96, 8]: 49152 elements, above the
  // size where blocks of rows go to the intra-op threads.
  const auto src = Bytes(8 * 64 * 96 * 4);
  Check(src, 0, {96, 8, 64}, {1, 6144, 96}, 4);
  Check(src, 0, {64, 96, 8}, {96, 1, 6144}, 4);
}
