#include "cpu/runtime/kernels/strided_copy.h"

#include <algorithm>
#include <cstring>

namespace ortc::exec {
namespace {

struct Axis {
  int64_t size, stride;
};

// Size-1 axes dropped; an axis merged into the next inner one when stepping it equals stepping
// the inner one its whole length (which also merges runs of broadcast axes).
std::vector<Axis> Coalesce(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  std::vector<Axis> inner_first;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 1) continue;
    if (!inner_first.empty()) {
      Axis& in = inner_first.back();
      if (strides[d] == in.stride * in.size) {
        in.size *= shape[d];
        continue;
      }
    }
    inner_first.push_back({shape[d], strides[d]});
  }
  return {inner_first.rbegin(), inner_first.rend()};
}

template <typename T>
void GatherRow(const char* src, int64_t n, int64_t stride, char* dst) {
  const auto* s = reinterpret_cast<const T*>(src);
  auto* d = reinterpret_cast<T*>(dst);
  for (int64_t k = 0; k < n; ++k) d[k] = s[k * stride];
}

// One innermost run of n elements from src (stepping `stride` elements) to dense dst.
void CopyRow(const char* src, int64_t n, int64_t stride, size_t es, char* dst) {
  if (stride == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * es);
    return;
  }
  switch (es) {
    case 1:
      return GatherRow<uint8_t>(src, n, stride, dst);
    case 2:
      return GatherRow<uint16_t>(src, n, stride, dst);
    case 4:
      return GatherRow<uint32_t>(src, n, stride, dst);
    case 8:
      return GatherRow<uint64_t>(src, n, stride, dst);
    default:
      for (int64_t k = 0; k < n; ++k)
        std::memcpy(dst + k * static_cast<int64_t>(es), src + k * stride * static_cast<int64_t>(es),
                    es);
  }
}

}  // namespace

void StridedCopy(const void* src, int64_t base, const std::vector<int64_t>& shape,
                 const std::vector<int64_t>& strides, size_t element_size, void* dst) {
  int64_t total = 1;
  for (int64_t d : shape) total *= d;
  if (total == 0) return;
  const auto es = static_cast<int64_t>(element_size);
  const char* from = static_cast<const char*>(src) + base * es;
  char* to = static_cast<char*>(dst);
  const std::vector<Axis> axes = Coalesce(shape, strides);
  if (axes.empty()) {  // one element
    std::memcpy(to, from, element_size);
    return;
  }
  const Axis row = axes.back();
  const size_t outer_rank = axes.size() - 1;
  const int64_t rows = total / row.size;
  // Rows in blocks of about 16K elements; each block finds its first row's source offset by
  // division, then walks the outer axes like an odometer.
  const int64_t rows_per_block = std::max<int64_t>(1, (1 << 14) / row.size);
  const int64_t blocks = (rows + rows_per_block - 1) / rows_per_block;
#pragma omp parallel for if (total >= (1 << 15) && blocks > 1) schedule(static)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t r0 = blk * rows_per_block, r1 = std::min(rows, r0 + rows_per_block);
    std::vector<int64_t> coord(outer_rank);
    int64_t offset = 0, rem = r0;
    for (size_t d = outer_rank; d-- > 0;) {
      coord[d] = rem % axes[d].size;
      rem /= axes[d].size;
      offset += coord[d] * axes[d].stride;
    }
    for (int64_t r = r0; r < r1; ++r) {
      CopyRow(from + offset * es, row.size, row.stride, element_size, to + r * row.size * es);
      for (size_t d = outer_rank; d-- > 0;) {
        offset += axes[d].stride;
        if (++coord[d] < axes[d].size) break;
        offset -= axes[d].stride * axes[d].size;
        coord[d] = 0;
      }
    }
  }
}

}  // namespace ortc::exec
