// Slicing, concatenating and stacking along an axis.
#include "cpu/runtime/kernels/tensor_pieces.h"

#include <cstring>

#include "cpu/runtime/kernels/kernel_util.h"

namespace ortc::exec {
namespace {

// Copies `count` elements from src[src_at] to dst[dst_at].
void CopyRun(const Tensor& src, int64_t src_at, Tensor& dst, int64_t dst_at, int64_t count) {
  if (count <= 0) return;
  if (src.dtype() == DataType::kString) {
    for (int64_t k = 0; k < count; ++k)
      dst.mutable_strings()[dst_at + k] = src.strings()[src_at + k];
    return;
  }
  const size_t es = ElementSize(src.dtype());
  std::memcpy(static_cast<char*>(dst.mutable_raw()) + dst_at * es,
              static_cast<const char*>(src.raw()) + src_at * es, static_cast<size_t>(count) * es);
}

}  // namespace

Tensor SliceAlong(const Tensor& x, int64_t axis, int64_t begin, int64_t count) {
  std::vector<int64_t> shape = x.shape();
  const int64_t dim = shape[axis];
  shape[axis] = count;
  Tensor y = Tensor::AllocateUninitialized(x.dtype(), shape);
  const int64_t outer = Product(x.shape(), 0, axis), inner = Product(x.shape(), axis + 1);
  for (int64_t o = 0; o < outer; ++o)
    CopyRun(x, (o * dim + begin) * inner, y, o * count * inner, count * inner);
  return y;
}

Tensor TakeAlong(const Tensor& x, int64_t axis, int64_t index) {
  Tensor piece = SliceAlong(x, axis, index, 1);
  std::vector<int64_t> shape = x.shape();
  shape.erase(shape.begin() + axis);
  return piece.Reshaped(shape);
}

Result<Tensor> ConcatAlong(const std::vector<Tensor>& parts, int64_t axis) {
  if (parts.empty()) return InvalidArgument("nothing to concatenate");
  const Tensor& first = parts[0];
  std::vector<int64_t> shape = first.shape();
  if (axis < 0 || axis >= first.rank()) return InvalidArgument("concatenation axis out of range");
  shape[axis] = 0;
  for (const auto& p : parts) {
    if (p.rank() != first.rank() || p.dtype() != first.dtype())
      return InvalidArgument("the tensors to concatenate differ in rank or type");
    for (int64_t d = 0; d < p.rank(); ++d) {
      if (d != axis && p.shape()[d] != first.shape()[d])
        return InvalidArgument("the tensors to concatenate differ in shape off the axis");
    }
    shape[axis] += p.shape()[axis];
  }
  Tensor y = Tensor::AllocateUninitialized(first.dtype(), shape);
  const int64_t outer = Product(shape, 0, axis), inner = Product(shape, axis + 1);
  int64_t at = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (const auto& p : parts) {
      const int64_t run = p.shape()[axis] * inner;
      CopyRun(p, o * run, y, at, run);
      at += run;
    }
  }
  return y;
}

Result<Tensor> StackAlong(const std::vector<Tensor>& parts, int64_t axis) {
  if (parts.empty()) return InvalidArgument("nothing to stack");
  if (axis < 0 || axis > parts[0].rank()) return InvalidArgument("stacking axis out of range");
  std::vector<Tensor> expanded;
  for (const auto& p : parts) {
    if (p.shape() != parts[0].shape())
      return InvalidArgument("the tensors to stack differ in shape");
    std::vector<int64_t> shape = p.shape();
    shape.insert(shape.begin() + axis, 1);
    expanded.push_back(p.Reshaped(shape));
  }
  return ConcatAlong(expanded, axis);
}

}  // namespace ortc::exec
