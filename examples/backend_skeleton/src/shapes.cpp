// Shape rules and size limits of the npu steps (see shapes.h).
#include "shapes.h"

namespace npu {

bool CheckDims(const std::vector<int64_t>& dims, uint64_t* count, std::string* why) {
  if (dims.size() > kMaxRank) {
    *why = "rank " + std::to_string(dims.size()) + " is above " + std::to_string(kMaxRank);
    return false;
  }
  uint64_t n = 1;
  for (const int64_t d : dims) {
    if (d < 1 || d > kMaxDim) {
      *why = "dim " + std::to_string(d) + " is outside [1, " + std::to_string(kMaxDim) + "]";
      return false;
    }
    // n <= kMaxElements and d < 2^31, so the product fits in 64 bits before the check.
    n *= static_cast<uint64_t>(d);
    if (n > kMaxElements) {
      *why = DimsText(dims) + " has more than 2^40 elements";
      return false;
    }
  }
  if (count) *count = n;
  return true;
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) text += ",";
    text += dims[i] < 0 ? "?" : std::to_string(dims[i]);
  }
  return text + "]";
}

bool ConvOutputDims(const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                    const ConvGeometry& g, std::vector<int64_t>* y, std::string* why) {
  if (x.size() != 4 || w.size() != 4) {
    *why = "Conv is not 2-D (input " + DimsText(x) + ", weight " + DimsText(w) + ")";
    return false;
  }
  if (!CheckDims(x, nullptr, why) || !CheckDims(w, nullptr, why)) return false;
  if (x[1] != w[1]) {
    *why = "Conv input has " + std::to_string(x[1]) + " channels, the weight " +
           std::to_string(w[1]) + " (group 1 only)";
    return false;
  }
  y->assign({x[0], w[0], 0, 0});
  for (int axis = 0; axis < 2; ++axis) {
    const int64_t stride = g.strides[axis], dilation = g.dilations[axis];
    const int64_t begin = g.pads[axis], end = g.pads[axis + 2];
    if (stride < 1 || stride > kMaxWindow || dilation < 1 || dilation > kMaxWindow || begin < 0 ||
        begin > kMaxWindow || end < 0 || end > kMaxWindow) {
      *why = "Conv strides, dilations or pads are out of range";
      return false;
    }
    // All terms are below 2^52: no overflow.
    const int64_t extent = dilation * (w[2 + axis] - 1) + 1;
    const int64_t padded = x[2 + axis] + begin + end;
    if (padded < extent) {
      *why = "Conv window (" + std::to_string(extent) + ") is larger than the padded input (" +
             std::to_string(padded) + ")";
      return false;
    }
    (*y)[2 + axis] = (padded - extent) / stride + 1;
  }
  return CheckDims(*y, nullptr, why);
}

bool MatMulOutputDims(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                      std::vector<int64_t>* y, std::string* why) {
  if (a.size() < 2 || b.size() != 2) {
    *why = "MatMul needs A of rank >= 2 and B of rank 2 (A " + DimsText(a) + ", B " + DimsText(b) +
           ")";
    return false;
  }
  if (!CheckDims(a, nullptr, why) || !CheckDims(b, nullptr, why)) return false;
  if (a.back() != b[0]) {
    *why = "MatMul inner dims differ (A " + DimsText(a) + ", B " + DimsText(b) + ")";
    return false;
  }
  *y = a;
  y->back() = b[1];
  return CheckDims(*y, nullptr, why);
}

}  // namespace npu
