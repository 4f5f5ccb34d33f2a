// Data-movement kernels: shape changes, gathers, slices, concatenation, indexing (Pad is in
// padding.cpp).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "cpu/runtime/kernels/kernel_util.h"
#include "cpu/runtime/kernels/registry.h"
#include "cpu/runtime/kernels/strided_copy.h"

namespace ortc::exec {
namespace {

size_t Es(const Tensor& t) {
  return ElementSize(t.dtype());
}

Status Reshape(KernelContext& c) {
  const Tensor& x = c.in(0);
  std::vector<int64_t> shape;
  if (c.op().version < 5) {
    shape = c.op().Ints("shape");
  } else {
    auto s = IntsOf(c.input(1));
    if (!s) return c.Error("the shape input must be int64");
    shape = *s;
  }
  const bool allowzero = c.op().Int("allowzero", 0) != 0;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allowzero) {
      if (i >= x.shape().size()) return c.Error("shape has a 0 past the input's rank");
      shape[i] = x.shape()[i];
    }
    if (shape[i] == -1) {
      if (infer >= 0) return c.Error("shape has more than one -1");
      infer = static_cast<int64_t>(i);
    } else if (shape[i] < 0) {
      return c.Error("shape has a negative size");
    } else if (shape[i] > 0 && known > kMaxTensorElements / shape[i]) {
      // Checked before multiplying: a hostile shape's product overflows int64.
      return c.Error("cannot reshape " + std::to_string(x.elements()) + " elements");
    } else {
      known *= shape[i];
    }
  }
  if (infer >= 0) shape[infer] = known == 0 ? 0 : x.elements() / known;
  if (!ShapeWithinLimit(shape) || Product(shape) != x.elements())
    return c.Error("cannot reshape " + std::to_string(x.elements()) + " elements");
  c.SetOutput(0, x.Reshaped(shape));
  return Status::Ok();
}

Status Flatten(KernelContext& c) {
  const Tensor& x = c.in(0);
  int64_t axis = c.op().Int("axis", 1);
  if (axis < 0) axis += x.rank();
  if (axis < 0 || axis > x.rank()) return c.Error("axis out of range");
  c.SetOutput(0, x.Reshaped({Product(x.shape(), 0, axis), Product(x.shape(), axis)}));
  return Status::Ok();
}

std::optional<std::vector<int64_t>> AxesInputOrAttr(KernelContext& c, int input_since) {
  if (c.op().version >= input_since) {
    if (!c.has_input(1)) return std::vector<int64_t>{};
    return IntsOf(c.input(1));
  }
  return c.op().Ints("axes");
}

Status Squeeze(KernelContext& c) {
  const Tensor& x = c.in(0);
  auto axes = AxesInputOrAttr(c, 13);
  if (!axes) return c.Error("axes must be int64");
  std::vector<bool> drop(x.rank(), false);
  if (axes->empty()) {
    for (int64_t i = 0; i < x.rank(); ++i) drop[i] = x.shape()[i] == 1;
  }
  for (int64_t a : *axes) {
    if (!NormaliseAxis(a, x.rank()) || x.shape()[a] != 1)
      return c.Error("cannot squeeze axis " + std::to_string(a));
    drop[a] = true;
  }
  std::vector<int64_t> shape;
  for (int64_t i = 0; i < x.rank(); ++i) {
    if (!drop[i]) shape.push_back(x.shape()[i]);
  }
  c.SetOutput(0, x.Reshaped(shape));
  return Status::Ok();
}

Status Unsqueeze(KernelContext& c) {
  const Tensor& x = c.in(0);
  auto axes = AxesInputOrAttr(c, 13);
  if (!axes) return c.Error("axes must be int64");
  const int64_t rank = x.rank() + static_cast<int64_t>(axes->size());
  std::vector<bool> inserted(rank, false);
  for (int64_t a : *axes) {
    if (!NormaliseAxis(a, rank) || inserted[a]) return c.Error("bad unsqueeze axis");
    inserted[a] = true;
  }
  std::vector<int64_t> shape;
  size_t k = 0;
  for (int64_t i = 0; i < rank; ++i) shape.push_back(inserted[i] ? 1 : x.shape()[k++]);
  c.SetOutput(0, x.Reshaped(shape));
  return Status::Ok();
}

// Per image, a [rows, cols] matrix of 4-byte elements written as [cols, rows], in tiles so
// both sides stay in cache.
void Transpose2d4Bytes(const uint32_t* src, int64_t rows, int64_t cols, uint32_t* dst) {
  constexpr int64_t kTile = 32;
#pragma omp parallel for if (rows * cols >= (1 << 15)) schedule(static)
  for (int64_t r0 = 0; r0 < rows; r0 += kTile)
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const int64_t r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + kTile);
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t col = c0; col < c1; ++col) dst[col * rows + r] = src[r * cols + col];
    }
}

// The channels-last layout changes (NCHW -> NHWC: perm 0,2,3,1; NHWC -> NCHW: 0,3,1,2) are a
// 2-D transpose per image. Returns false for other permutations.
bool TransposeRotation4Bytes(const Tensor& x, const std::vector<int64_t>& perm, Tensor& y) {
  const auto& d = x.shape();
  int64_t rows, cols;
  if (perm == std::vector<int64_t>{0, 2, 3, 1}) {
    rows = d[1];
    cols = d[2] * d[3];
  } else if (perm == std::vector<int64_t>{0, 3, 1, 2}) {
    rows = d[1] * d[2];
    cols = d[3];
  } else {
    return false;
  }
  const auto* src = static_cast<const uint32_t*>(x.raw());
  auto* dst = static_cast<uint32_t*>(y.mutable_raw());
  for (int64_t n = 0; n < d[0]; ++n)
    Transpose2d4Bytes(src + n * rows * cols, rows, cols, dst + n * rows * cols);
  return true;
}

Status Transpose(KernelContext& c) {
  const Tensor& x = c.in(0);
  const int64_t rank = x.rank();
  std::vector<int64_t> perm = c.op().Ints("perm");
  if (perm.empty()) {
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  if (static_cast<int64_t>(perm.size()) != rank) return c.Error("perm does not match the rank");
  std::vector<int64_t> shape(rank), src_strides(rank);
  const auto in_strides = Strides(x.shape());
  std::vector<bool> taken(rank, false);
  for (int64_t i = 0; i < rank; ++i) {
    // A repeated axis would read past the input (perm [0, 0] of a 2x3 reads element 6).
    if (perm[i] < 0 || perm[i] >= rank || taken[perm[i]])
      return c.Error("perm is not a permutation of the input's axes");
    taken[perm[i]] = true;
    shape[i] = x.shape()[perm[i]];
    src_strides[i] = in_strides[perm[i]];
  }
  if (Es(x) == 4 && rank == 4 && perm[0] == 0 &&
      TransposeRotation4Bytes(x, perm, c.OutputUninit(0, x.dtype(), shape)))
    return Status::Ok();
  if (x.dtype() != DataType::kString) {
    Tensor& y = c.OutputUninit(0, x.dtype(), shape);
    StridedCopy(x.raw(), 0, shape, src_strides, Es(x), y.mutable_raw());
    return Status::Ok();
  }
  Tensor& y = c.Output(0, x.dtype(), shape);
  ForEachBroadcast(shape, {src_strides},
                   [&](int64_t i, const std::vector<int64_t>& o) { CopyElement(x, o[0], y, i); });
  return Status::Ok();
}

Status Concat(KernelContext& c) {
  const Tensor& first = c.in(0);
  int64_t axis = c.op().Int("axis", 0);
  if (!NormaliseAxis(axis, first.rank())) return c.Error("axis out of range");
  std::vector<int64_t> shape = first.shape();
  shape[axis] = 0;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    if (c.in(i).rank() != first.rank()) return c.Error("inputs differ in rank");
    // Copied in chunks of the first input's layout: every other dimension and the type must
    // agree (fuzz_model, ASan: a narrower input was read past its end).
    for (int64_t d = 0; d < first.rank(); ++d)
      if (d != axis && c.in(i).shape()[d] != first.shape()[d])
        return c.Error("inputs differ in a dimension other than the axis");
    if (c.in(i).dtype() != first.dtype()) return c.Error("inputs differ in type");
    shape[axis] += c.in(i).shape()[axis];
  }
  Tensor& y = c.Output(0, first.dtype(), shape);
  const int64_t outer = Product(shape, 0, axis), inner = Product(shape, axis + 1);
  int64_t dst = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t i = 0; i < c.num_inputs(); ++i) {
      const Tensor& t = c.in(i);
      const int64_t chunk = t.shape()[axis] * inner;
      if (t.dtype() == DataType::kString) {
        for (int64_t k = 0; k < chunk; ++k) CopyElement(t, o * chunk + k, y, dst + k);
      } else {
        std::memcpy(static_cast<char*>(y.mutable_raw()) + dst * Es(t),
                    static_cast<const char*>(t.raw()) + o * chunk * Es(t), chunk * Es(t));
      }
      dst += chunk;
    }
  }
  return Status::Ok();
}

Status Split(KernelContext& c) {
  const Tensor& x = c.in(0);
  int64_t axis = c.op().Int("axis", 0);
  if (!NormaliseAxis(axis, x.rank())) return c.Error("axis out of range");
  const auto n = static_cast<int64_t>(c.num_outputs());
  if (n == 0) return c.Error("Split has no output");
  std::vector<int64_t> sizes;
  if (c.op().version >= 13 && c.has_input(1)) {
    auto s = IntsOf(c.input(1));
    if (!s) return c.Error("split must be int64");
    sizes = *s;
  } else if (c.op().version < 13 && c.op().Has("split")) {
    sizes = c.op().Ints("split");
  } else {
    const int64_t dim = x.shape()[axis];
    const int64_t chunk = c.op().Has("num_outputs") ? (dim + n - 1) / n : dim / n;
    for (int64_t i = 0; i < n; ++i) sizes.push_back(std::min(chunk, dim - i * chunk));
  }
  if (static_cast<int64_t>(sizes.size()) != n)
    return c.Error("split sizes do not match the outputs");
  // The pieces are copied from consecutive offsets: they must tile the axis exactly.
  int64_t total = 0;
  for (int64_t size : sizes) {
    if (size < 0 || size > x.shape()[axis] - total)
      return c.Error("split sizes must be non-negative and sum to the axis' length " +
                     std::to_string(x.shape()[axis]));
    total += size;
  }
  if (total != x.shape()[axis])
    return c.Error("split sizes must be non-negative and sum to the axis' length " +
                   std::to_string(x.shape()[axis]));
  const int64_t outer = Product(x.shape(), 0, axis), inner = Product(x.shape(), axis + 1);
  int64_t offset = 0;
  for (int64_t k = 0; k < n; ++k) {
    std::vector<int64_t> shape = x.shape();
    shape[axis] = sizes[k];
    if (x.dtype() != DataType::kString) {  // rows of sizes[k] * inner elements, a row per outer
      Tensor& y = c.OutputUninit(k, x.dtype(), shape);
      StridedCopy(x.raw(), offset * inner, {outer, sizes[k] * inner}, {x.shape()[axis] * inner, 1},
                  Es(x), y.mutable_raw());
      offset += sizes[k];
      continue;
    }
    Tensor& y = c.Output(k, x.dtype(), shape);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < sizes[k] * inner; ++j)
        CopyElement(x, (o * x.shape()[axis] + offset) * inner + j, y, o * sizes[k] * inner + j);
    }
    offset += sizes[k];
  }
  return Status::Ok();
}

Status Slice(KernelContext& c) {
  const Tensor& x = c.in(0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.op().version < 10) {
    starts = c.op().Ints("starts");
    ends = c.op().Ints("ends");
    axes = c.op().Ints("axes");
  } else {
    auto s = IntsOf(c.input(1)), e = IntsOf(c.input(2));
    if (!s || !e) return c.Error("starts/ends must be integers");
    starts = *s;
    ends = *e;
    for (auto [index, out] : {std::pair{3, &axes}, std::pair{4, &steps}}) {
      if (!c.has_input(index)) continue;
      auto v = IntsOf(c.input(index));
      if (!v) return c.Error("axes/steps must be integers");
      *out = std::move(*v);
    }
  }
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    return c.Error("starts, ends, axes and steps must have the same length");
  }
  const int64_t rank = x.rank();
  std::vector<int64_t> begin(rank, 0), step(rank, 1), count = x.shape();
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t a = axes[k];
    if (!NormaliseAxis(a, rank) || steps[k] == 0) return c.Error("bad slice axis or step");
    const SliceAxis r = ResolveSliceAxis(x.shape()[a], starts[k], ends[k], steps[k]);
    begin[a] = r.begin;
    step[a] = r.step;
    count[a] = r.count;
  }
  const auto strides = Strides(x.shape());
  int64_t base = 0;
  std::vector<int64_t> walk(rank);
  for (int64_t i = 0; i < rank; ++i) {
    base += begin[i] * strides[i];
    walk[i] = step[i] * strides[i];
  }
  if (x.dtype() != DataType::kString) {
    Tensor& y = c.OutputUninit(0, x.dtype(), count);
    StridedCopy(x.raw(), base, count, walk, Es(x), y.mutable_raw());
    return Status::Ok();
  }
  Tensor& y = c.Output(0, x.dtype(), count);
  ForEachBroadcast(count, {walk}, [&](int64_t i, const std::vector<int64_t>& o) {
    CopyElement(x, base + o[0], y, i);
  });
  return Status::Ok();
}

Status Gather(KernelContext& c) {
  const Tensor& x = c.in(0);
  auto idx = IntsOf(c.input(1));
  if (!idx) return c.Error("indices must be int32 or int64");
  int64_t axis = c.op().Int("axis", 0);
  if (!NormaliseAxis(axis, x.rank())) return c.Error("axis out of range");
  std::vector<int64_t> shape(x.shape().begin(), x.shape().begin() + axis);
  for (int64_t d : c.in(1).shape()) shape.push_back(d);
  shape.insert(shape.end(), x.shape().begin() + axis + 1, x.shape().end());
  Tensor& y = c.Output(0, x.dtype(), shape);
  const int64_t outer = Product(x.shape(), 0, axis), inner = Product(x.shape(), axis + 1),
                dim = x.shape()[axis];
  for (int64_t& k : *idx) {  // checked once, not once per outer index (up to 2^40 of them)
    if (k < -dim || k >= dim) return c.Error("index " + std::to_string(k) + " out of range");
    if (k < 0) k += dim;
  }
  if (y.elements() == 0) return Status::Ok();
  int64_t dst = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k : *idx) {
      for (int64_t j = 0; j < inner; ++j) CopyElement(x, (o * dim + k) * inner + j, y, dst++);
    }
  }
  return Status::Ok();
}

Status GatherElements(KernelContext& c) {
  const Tensor& x = c.in(0);
  const Tensor& ind = c.in(1);
  auto idx = IntsOf(&ind);
  if (!idx) return c.Error("indices must be integers");
  int64_t axis = c.op().Int("axis", 0);
  if (!NormaliseAxis(axis, x.rank())) return c.Error("axis out of range");
  // indices have data's rank and are no larger than it off the axis (coordinates read there).
  bool fits = ind.rank() == x.rank();
  for (int64_t d = 0; fits && d < x.rank(); ++d) fits = d == axis || ind.shape()[d] <= x.shape()[d];
  if (!fits)
    return c.Error("GatherElements indices must have data's rank and be no larger off the axis");
  Tensor& y = c.Output(0, x.dtype(), ind.shape());
  const auto xs = Strides(x.shape());
  const auto is = Strides(ind.shape());
  for (int64_t i = 0; i < ind.elements(); ++i) {
    int64_t rem = i, src = 0;
    for (int64_t d = 0; d < ind.rank(); ++d) {
      int64_t coord = rem / is[d];
      rem %= is[d];
      if (d == axis) {
        coord = (*idx)[i];
        if (coord < 0) coord += x.shape()[d];
        if (coord < 0 || coord >= x.shape()[d]) return c.Error("index out of range");
      }
      src += coord * xs[d];
    }
    CopyElement(x, src, y, i);
  }
  return Status::Ok();
}

Status Expand(KernelContext& c) {
  const Tensor& x = c.in(0);
  auto target = IntsOf(c.input(1));
  if (!target) return c.Error("shape must be int64");
  auto shape = BroadcastShape({x.shape(), *target});
  if (!shape) return c.Error("cannot expand to that shape");
  if (x.dtype() != DataType::kString) {
    Tensor& y = c.OutputUninit(0, x.dtype(), *shape);
    StridedCopy(x.raw(), 0, *shape, BroadcastStrides(x.shape(), *shape), Es(x), y.mutable_raw());
    return Status::Ok();
  }
  Tensor& y = c.Output(0, x.dtype(), *shape);
  ForEachBroadcast(*shape, {BroadcastStrides(x.shape(), *shape)},
                   [&](int64_t i, const std::vector<int64_t>& o) { CopyElement(x, o[0], y, i); });
  return Status::Ok();
}

Status Tile(KernelContext& c) {
  const Tensor& x = c.in(0);
  auto reps = IntsOf(c.input(1));
  if (!reps || static_cast<int64_t>(reps->size()) != x.rank())
    return c.Error("repeats must match the rank");
  std::vector<int64_t> shape(x.rank());
  for (int64_t i = 0; i < x.rank(); ++i) {
    const int64_t r = (*reps)[i];
    // Bounded before multiplying so the product cannot overflow; the output's size is checked
    // against the session's cap when it is allocated.
    if (r < 0 || (r > 0 && x.shape()[i] > kMaxTensorElements / r))
      return c.Error("repeats must be non-negative and give at most 2^40 elements per axis");
    shape[i] = x.shape()[i] * r;
  }
  Tensor& y = c.Output(0, x.dtype(), shape);
  const auto xs = Strides(x.shape());
  const auto ys = Strides(shape);
  for (int64_t i = 0; i < y.elements(); ++i) {
    int64_t rem = i, src = 0;
    for (int64_t d = 0; d < x.rank(); ++d) {
      src += ((rem / ys[d]) % x.shape()[d]) * xs[d];
      rem %= ys[d];
    }
    CopyElement(x, src, y, i);
  }
  return Status::Ok();
}

Status Shape(KernelContext& c) {
  const auto& s = c.in(0).shape();
  const auto rank = static_cast<int64_t>(s.size());
  int64_t start = c.op().Int("start", 0), end = c.op().Int("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  Tensor& y = c.Output(0, DataType::kInt64, {end - start});
  for (int64_t i = start; i < end; ++i) y.mutable_data<int64_t>()[i - start] = s[i];
  return Status::Ok();
}

Status Size(KernelContext& c) {
  Tensor& y = c.Output(0, DataType::kInt64, {});
  y.mutable_data<int64_t>()[0] = c.in(0).elements();
  return Status::Ok();
}

Status ConstantOfShape(KernelContext& c) {
  auto shape = IntsOf(c.input(0));
  if (!shape) return c.Error("shape must be int64");
  Tensor value = c.op().Has("value") ? c.op().attrs.at("value").tensor
                                     : Tensor::Allocate(DataType::kFloat, {1});
  if (value.elements() != 1) return c.Error("value must have one element");
  Tensor& y = c.Output(0, value.dtype(), *shape);
  for (int64_t i = 0; i < y.elements(); ++i) CopyElement(value, 0, y, i);
  return Status::Ok();
}

Status Range(KernelContext& c) {
  const double start = ElementAsDouble(c.in(0), 0), limit = ElementAsDouble(c.in(1), 0),
               delta = ElementAsDouble(c.in(2), 0);
  if (delta == 0) return c.Error("delta is zero");
  const double count = std::ceil((limit - start) / delta);
  // Bounded in double: converting NaN, infinity or anything past int64 is undefined.
  if (std::isnan(count) || count > static_cast<double>(kMaxTensorElements))
    return c.Error("start, limit and delta give more than 2^40 elements");
  const auto n = static_cast<int64_t>(std::max(0.0, count));
  Tensor& y = c.Output(0, c.in(0).dtype(), {n});
  for (int64_t i = 0; i < n; ++i)
    SetElementFromDouble(y, i, start + static_cast<double>(i) * delta);
  return Status::Ok();
}

Status DepthSpace(KernelContext& c, bool to_space) {
  const Tensor& x = c.in(0);
  if (x.rank() != 4) return c.Error("input must be 4-D");
  const int64_t b = c.op().Int("blocksize", 0);
  if (b <= 0) return c.Error("blocksize must be positive");
  const int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  const bool crd = c.op().String("mode", "DCR") == "CRD";
  // Channels (DepthToSpace) or height and width (SpaceToDepth) must split into whole blocks;
  // the bound keeps b * b and the output sizes within 64 bits.
  if (b > (int64_t{1} << 20) || (to_space ? C % (b * b) != 0 : H % b != 0 || W % b != 0) ||
      (!to_space && C > kMaxTensorElements / (b * b)))
    return c.Error(to_space
                       ? "DepthToSpace channels (" + std::to_string(C) +
                             ") must be a multiple of blocksize^2 (" + std::to_string(b) + "^2)"
                       : "SpaceToDepth height and width (" + std::to_string(H) + ", " +
                             std::to_string(W) + ") must be multiples of blocksize (" +
                             std::to_string(b) + ")");
  if (to_space) {
    Tensor& y = c.Output(0, x.dtype(), {N, C / (b * b), H * b, W * b});
    if (y.elements() == 0) return Status::Ok();  // the loops may still be 2^39 long
    const int64_t oc = C / (b * b);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t ch = 0; ch < oc; ++ch)
        for (int64_t h = 0; h < H * b; ++h)
          for (int64_t w = 0; w < W * b; ++w) {
            const int64_t bh = h % b, bw = w % b;
            const int64_t src_c = crd ? ch * b * b + bh * b + bw : (bh * b + bw) * oc + ch;
            CopyElement(x, ((n * C + src_c) * H + h / b) * W + w / b, y,
                        ((n * oc + ch) * H * b + h) * W * b + w);
          }
  } else {
    Tensor& y = c.Output(0, x.dtype(), {N, C * b * b, H / b, W / b});
    if (y.elements() == 0) return Status::Ok();
    const int64_t oh = H / b, ow = W / b;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t oc = 0; oc < C * b * b; ++oc)
        for (int64_t h = 0; h < oh; ++h)
          for (int64_t w = 0; w < ow; ++w) {
            const int64_t blk = oc / C, ch = oc % C, bh = blk / b, bw = blk % b;
            CopyElement(x, ((n * C + ch) * H + h * b + bh) * W + w * b + bw, y,
                        ((n * C * b * b + oc) * oh + h) * ow + w);
          }
  }
  return Status::Ok();
}
Status DepthToSpace(KernelContext& c) {
  return DepthSpace(c, true);
}
Status SpaceToDepth(KernelContext& c) {
  return DepthSpace(c, false);
}

Status Dropout(KernelContext& c) {
  // Inference: the identity, and an all-true mask when asked for. Training mode with a nonzero
  // ratio would be random: refused rather than silently run as the identity.
  const bool training =
      c.has_input(2) && c.in(2).elements() > 0 && ElementAsDouble(c.in(2), 0) != 0;
  const double ratio = c.has_input(1) && c.in(1).elements() > 0 ? ElementAsDouble(c.in(1), 0) : 0.5;
  if (training && ratio != 0)
    return NotImplemented("training-mode Dropout (random) is not supported");
  c.SetOutput(0, c.in(0));
  if (c.wants_output(1)) {
    Tensor& mask = c.Output(1, DataType::kBool, c.in(0).shape());
    std::fill_n(mask.mutable_data<bool>(), mask.elements(), true);
  }
  return Status::Ok();
}

Status ArgReduce(KernelContext& c, bool max) {
  const Tensor& x = c.in(0);
  int64_t axis = c.op().Int("axis", 0);
  if (!NormaliseAxis(axis, x.rank())) return c.Error("axis out of range");
  const bool keep = c.op().Int("keepdims", 1) != 0, last = c.op().Int("select_last_index", 0) != 0;
  std::vector<int64_t> shape = x.shape();
  if (keep) {
    shape[axis] = 1;
  } else {
    shape.erase(shape.begin() + axis);
  }
  Tensor& y = c.Output(0, DataType::kInt64, shape);
  const int64_t outer = Product(x.shape(), 0, axis), inner = Product(x.shape(), axis + 1),
                dim = x.shape()[axis];
  if (y.elements() == 0) return Status::Ok();
  // Each output reads element 0 of its slice: an empty axis has none.
  if (dim == 0) return c.Error("cannot take the arg max or min over an empty axis");
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      int64_t best = 0;
      double bv = ElementAsDouble(x, o * dim * inner + j);
      for (int64_t k = 1; k < dim; ++k) {
        const double v = ElementAsDouble(x, (o * dim + k) * inner + j);
        if ((max && (v > bv || (last && v == bv))) || (!max && (v < bv || (last && v == bv)))) {
          bv = v;
          best = k;
        }
      }
      y.mutable_data<int64_t>()[o * inner + j] = best;
    }
  return Status::Ok();
}
Status ArgMax(KernelContext& c) {
  return ArgReduce(c, true);
}
Status ArgMin(KernelContext& c) {
  return ArgReduce(c, false);
}

Status TopK(KernelContext& c) {
  const Tensor& x = c.in(0);
  const auto k_input =
      c.op().version < 10 ? std::optional<int64_t>(c.op().Int("k", 0)) : FirstIntOf(c.input(1));
  if (!k_input) return c.Error("TopK k must be an integer tensor with one element");
  int64_t k = *k_input;
  int64_t axis = c.op().Int("axis", -1);
  if (!NormaliseAxis(axis, x.rank())) return c.Error("axis out of range");
  const bool largest = c.op().Int("largest", 1) != 0, sorted = c.op().Int("sorted", 1) != 0;
  (void)sorted;  // outputs are always sorted, which satisfies both settings
  const int64_t dim = x.shape()[axis];
  if (k < 0 || k > dim) return c.Error("k out of range");
  std::vector<int64_t> shape = x.shape();
  shape[axis] = k;
  Tensor& vals = c.Output(0, x.dtype(), shape);
  Tensor& idxs = c.Output(1, DataType::kInt64, shape);
  if (x.elements() == 0) return Status::Ok();  // the axis alone may be 2^40 long
  const int64_t outer = Product(x.shape(), 0, axis), inner = Product(x.shape(), axis + 1);
  std::vector<int64_t> order(dim);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      std::iota(order.begin(), order.end(), 0);
      auto at = [&](int64_t i) { return ElementAsDouble(x, (o * dim + i) * inner + j); };
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return largest ? at(a) > at(b) : at(a) < at(b);
      });
      for (int64_t i = 0; i < k; ++i) {
        CopyElement(x, (o * dim + order[i]) * inner + j, vals, (o * k + i) * inner + j);
        idxs.mutable_data<int64_t>()[(o * k + i) * inner + j] = order[i];
      }
    }
  return Status::Ok();
}

Status NonZero(KernelContext& c) {
  const Tensor& x = c.in(0);
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < x.elements(); ++i) {
    if (ElementAsDouble(x, i) != 0) hits.push_back(i);
  }
  const int64_t rank = std::max<int64_t>(x.rank(), 1);
  Tensor& y = c.Output(0, DataType::kInt64, {rank, static_cast<int64_t>(hits.size())});
  const auto s = Strides(x.shape());
  for (size_t h = 0; h < hits.size(); ++h) {
    int64_t rem = hits[h];
    for (int64_t d = 0; d < x.rank(); ++d) {
      y.mutable_data<int64_t>()[d * hits.size() + h] = rem / s[d];
      rem %= s[d];
    }
  }
  return Status::Ok();
}

Status Trilu(KernelContext& c) {
  const Tensor& x = c.in(0);
  if (x.rank() < 2) return c.Error("Trilu needs an input of rank >= 2");
  const auto k_input = c.has_input(1) ? FirstIntOf(c.input(1)) : std::optional<int64_t>(0);
  if (!k_input) return c.Error("Trilu k must be an integer tensor with one element");
  const int64_t k = *k_input;
  const bool upper = c.op().Int("upper", 1) != 0;
  Tensor& y = c.Output(0, x.dtype(), x.shape());
  const int64_t rows = x.shape()[x.rank() - 2], cols = x.shape()[x.rank() - 1];
  for (int64_t i = 0; i < x.elements(); ++i) {
    const int64_t r = (i / cols) % rows, col = i % cols;
    const bool keep = upper ? col - r >= k : col - r <= k;
    if (keep) CopyElement(x, i, y, i);
  }
  return Status::Ok();
}

Status CumSum(KernelContext& c) {
  const Tensor& x = c.in(0);
  const auto axis_input = FirstIntOf(c.input(1));
  if (!axis_input) return c.Error("CumSum axis must be an integer tensor with one element");
  int64_t axis = *axis_input;
  if (!NormaliseAxis(axis, x.rank())) return c.Error("axis out of range");
  const bool exclusive = c.op().Int("exclusive", 0) != 0, reverse = c.op().Int("reverse", 0) != 0;
  Tensor& y = c.Output(0, x.dtype(), x.shape());
  if (x.elements() == 0) return Status::Ok();
  const int64_t outer = Product(x.shape(), 0, axis), inner = Product(x.shape(), axis + 1),
                dim = x.shape()[axis];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      double acc = 0;
      for (int64_t s = 0; s < dim; ++s) {
        const int64_t k = reverse ? dim - 1 - s : s;
        const int64_t i = (o * dim + k) * inner + j;
        const double v = ElementAsDouble(x, i);
        if (!exclusive) acc += v;
        SetElementFromDouble(y, i, acc);
        if (exclusive) acc += v;
      }
    }
  return Status::Ok();
}

Status OneHot(KernelContext& c) {
  const Tensor& ind = c.in(0);
  const Tensor& values = c.in(2);
  // Depth and indices may be float: converted only when finite and in range.
  if (c.in(1).elements() != 1 || c.in(1).dtype() == DataType::kString)
    return c.Error("depth must be one number");
  const double depth_value = ElementAsDouble(c.in(1), 0);
  if (!(depth_value >= 0 && depth_value <= static_cast<double>(kMaxTensorElements)))
    return c.Error("depth must be in [0, 2^40]");
  const auto depth = static_cast<int64_t>(depth_value);
  if (values.elements() != 2) return c.Error("values must have two elements: off and on");
  if (ind.dtype() == DataType::kString) return c.Error("indices must be numbers");
  int64_t axis = c.op().Int("axis", -1);
  const int64_t rank = ind.rank() + 1;
  if (!NormaliseAxis(axis, rank)) return c.Error("axis out of range");
  std::vector<int64_t> shape = ind.shape();
  shape.insert(shape.begin() + axis, depth);
  Tensor& y = c.Output(0, values.dtype(), shape);
  if (y.elements() == 0) return Status::Ok();
  const int64_t outer = Product(ind.shape(), 0, axis);
  const int64_t tail = ind.elements() / std::max<int64_t>(outer, 1);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t d = 0; d < depth; ++d)
      for (int64_t j = 0; j < tail; ++j) {
        const double v = ElementAsDouble(ind, o * tail + j);
        // Indices outside [-depth, depth) (NaN and huge ones too) select no position.
        int64_t k = -1;
        if (v >= -static_cast<double>(depth) && v < static_cast<double>(depth)) {
          k = static_cast<int64_t>(v);
          if (k < 0) k += depth;
        }
        CopyElement(values, k == d ? 1 : 0, y, (o * depth + d) * tail + j);
      }
  return Status::Ok();
}

Status EyeLike(KernelContext& c) {
  const Tensor& x = c.in(0);
  if (x.rank() != 2) return c.Error("EyeLike needs a 2-D input");
  const auto dtype =
      c.op().Has("dtype") ? static_cast<DataType>(c.op().Int("dtype", 1)) : x.dtype();
  const int64_t k = c.op().Int("k", 0);
  Tensor& y = c.Output(0, dtype, x.shape());
  const int64_t rows = x.shape()[0], cols = x.shape()[1];
  // Only the rows the diagonal crosses: r + k can neither overflow nor leave [0, cols), and an
  // empty tensor's 2^40 rows are not walked.
  if (k >= cols || k <= -rows) return Status::Ok();
  for (int64_t r = std::max<int64_t>(0, -k); r < std::min(rows, cols - k); ++r)
    SetElementFromDouble(y, r * cols + r + k, 1);
  return Status::Ok();
}

// A Constant left as an op (its output is a graph output, so the compiler kept the node).
Status Constant(KernelContext& c) {
  const auto& op = c.op();
  if (op.Has("value")) {
    c.SetOutput(0, op.attrs.at("value").tensor);
  } else if (op.Has("value_float")) {
    const float v = op.Float("value_float", 0.f);
    c.SetOutput(0, Tensor::FromBytes(DataType::kFloat, {}, &v, 4));
  } else if (op.Has("value_int")) {
    const int64_t v = op.Int("value_int", 0);
    c.SetOutput(0, Tensor::FromBytes(DataType::kInt64, {}, &v, 8));
  } else if (op.Has("value_floats")) {
    const auto v = op.Floats("value_floats");
    c.SetOutput(0, Tensor::FromBytes(DataType::kFloat, {static_cast<int64_t>(v.size())}, v.data(),
                                     v.size() * 4));
  } else if (op.Has("value_ints")) {
    const auto v = op.Ints("value_ints");
    c.SetOutput(0, Tensor::FromBytes(DataType::kInt64, {static_cast<int64_t>(v.size())}, v.data(),
                                     v.size() * 8));
  } else {
    return c.Error("Constant has no supported value attribute");
  }
  return Status::Ok();
}

}  // namespace

void RegisterTensorKernels(KernelTable& t) {
  t["Constant"] = Constant;
  t["Reshape"] = Reshape;
  t["Flatten"] = Flatten;
  t["Squeeze"] = Squeeze;
  t["Unsqueeze"] = Unsqueeze;
  t["Transpose"] = Transpose;
  t["Concat"] = Concat;
  t["Split"] = Split;
  t["Slice"] = Slice;
  t["Gather"] = Gather;
  t["GatherElements"] = GatherElements;
  t["Expand"] = Expand;
  t["Tile"] = Tile;
  t["Shape"] = Shape;
  t["Size"] = Size;
  t["ConstantOfShape"] = ConstantOfShape;
  t["Range"] = Range;
  t["DepthToSpace"] = DepthToSpace;
  t["SpaceToDepth"] = SpaceToDepth;
  t["Dropout"] = Dropout;
  t["ArgMax"] = ArgMax;
  t["ArgMin"] = ArgMin;
  t["TopK"] = TopK;
  t["NonZero"] = NonZero;
  t["Trilu"] = Trilu;
  t["CumSum"] = CumSum;
  t["OneHot"] = OneHot;
  t["EyeLike"] = EyeLike;
}

}  // namespace ortc::exec
