// Shape arithmetic: see shape_math.h.
#include "base/shape_math.h"

#include <algorithm>

namespace ortc::exec {

std::vector<int64_t> Strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

int64_t Product(const std::vector<int64_t>& v, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < std::min(to, v.size()); ++i) p *= v[i];
  return p;
}

std::optional<std::vector<int64_t>> BroadcastShape(
    const std::vector<std::vector<int64_t>>& shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  std::vector<int64_t> out(rank, 1);
  for (const auto& s : shapes) {
    for (size_t i = 0; i < s.size(); ++i) {
      const size_t d = rank - s.size() + i;
      if (s[i] == out[d] || s[i] == 1) continue;
      if (out[d] != 1) return std::nullopt;
      out[d] = s[i];
    }
  }
  return out;
}

std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& in,
                                      const std::vector<int64_t>& out) {
  std::vector<int64_t> strides(out.size(), 0);
  const auto in_strides = Strides(in);
  for (size_t i = 0; i < in.size(); ++i) {
    const size_t d = out.size() - in.size() + i;
    strides[d] = in[i] == 1 ? 0 : in_strides[i];
  }
  return strides;
}

bool NormaliseAxis(int64_t& axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return false;
  if (axis < 0) axis += rank;
  return true;
}

SliceAxis ResolveSliceAxis(int64_t dim, int64_t start, int64_t end, int64_t step) {
  const int64_t longest = std::max<int64_t>(dim, 1);
  SliceAxis r;
  r.step = std::clamp<int64_t>(step, -longest, longest);
  // Clamped before adding dim, so that bounds near the int64 limits cannot overflow.
  start = std::clamp<int64_t>(start, -dim - 1, dim + 1);
  end = std::clamp<int64_t>(end, -dim - 1, dim + 1);
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (r.step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    r.count = end > start ? (end - start - 1) / r.step + 1 : 0;
  } else {
    // [0, dim - 1] as the specification says (ONNX Runtime agrees; numpy would give nothing
    // for a start before the beginning); an empty axis gives nothing.
    start = std::clamp<int64_t>(start, std::min<int64_t>(0, dim - 1), dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    r.count = start > end ? (start - end - 1) / -r.step + 1 : 0;
  }
  r.begin = r.count > 0 ? start : 0;
  return r;
}

}  // namespace ortc::exec
