// Pad in its four modes: constant (filled, then the input's rows copied in), edge, reflect and
// wrap (each output element's source coordinate resolved per axis).
#include <algorithm>
#include <cstring>

#include "cpu/runtime/kernels/kernel_util.h"
#include "cpu/runtime/kernels/registry.h"

namespace ortc::exec {
namespace {

size_t Es(const Tensor& t) {
  return ElementSize(t.dtype());
}

template <typename T>
void FillTyped(char* out, int64_t n) {
  T v;
  std::memcpy(&v, out, sizeof(T));
  std::fill_n(reinterpret_cast<T*>(out), n, v);
}

// Every element of out set to its first (es bytes each).
void FillWithFirst(char* out, int64_t n, size_t es) {
  switch (es) {
    case 1:
      return FillTyped<uint8_t>(out, n);
    case 2:
      return FillTyped<uint16_t>(out, n);
    case 4:
      return FillTyped<uint32_t>(out, n);
    case 8:
      return FillTyped<uint64_t>(out, n);
    default:
      for (int64_t i = 1; i < n; ++i) std::memcpy(out + i * static_cast<int64_t>(es), out, es);
  }
}

// Constant-mode Pad of any fixed-size type: the part of x that lands inside y (all of it, or what
// negative pads leave) copied in runs, y's elements between runs filled with the value, so each
// element of y is written once. A run is a row of the last axis, or several axes' worth where
// the box covers whole rows of both x and y (a cache growing by rows copies each head's rows as
// one block). A decoder's key/value caches grow through Pad every step; element by element it
// was a third of the step.
void PadConstant(const Tensor& x, const std::vector<int64_t>& before, double value, Tensor& y) {
  const int64_t total = y.elements();
  if (total == 0) return;
  const size_t es = Es(x);
  auto* out = static_cast<char*>(y.mutable_raw());
  SetElementFromDouble(y, 0, value);
  std::vector<char> fill(es);
  std::memcpy(fill.data(), out, es);
  // Elements [from, to) of y set to the value (element 0 holds it already).
  auto fill_gap = [&](int64_t from, int64_t to) {
    if (to <= from) return;
    if (from == 0) {
      FillWithFirst(out, to, es);
      return;
    }
    std::memcpy(out + from * static_cast<int64_t>(es), fill.data(), es);
    FillWithFirst(out + from * static_cast<int64_t>(es), to - from, es);
  };
  const int64_t rank = x.rank();
  if (rank == 0) {  // a scalar pads to itself
    std::memcpy(out, x.raw(), es);
    return;
  }
  // The copied box: from src_start in x to dst_start in y, count long, per axis.
  std::vector<int64_t> src_start(rank), dst_start(rank), count(rank);
  for (int64_t d = 0; d < rank; ++d) {
    src_start[d] = std::max<int64_t>(0, -before[d]);
    dst_start[d] = std::max<int64_t>(0, before[d]);
    count[d] = std::min(x.shape()[d] - src_start[d], y.shape()[d] - dst_start[d]);
    if (count[d] <= 0) return fill_gap(0, total);
  }
  const auto xs = Strides(x.shape());
  const auto ys = Strides(y.shape());
  int64_t src = 0, dst = 0;
  for (int64_t d = 0; d < rank; ++d) {
    src += src_start[d] * xs[d];
    dst += dst_start[d] * ys[d];
  }
  // Runs span the trailing axes the box covers whole in x and y, and the axis before them.
  int64_t inner = rank - 1, run = count[rank - 1];
  while (inner > 0 && count[inner] == x.shape()[inner] && count[inner] == y.shape()[inner]) {
    --inner;
    run *= count[inner];
  }
  const auto* in = static_cast<const char*>(x.raw());
  std::vector<int64_t> coord(static_cast<size_t>(inner), 0);
  int64_t filled = 0;  // y's elements before this are written
  while (true) {
    fill_gap(filled, dst);
    std::memcpy(out + dst * static_cast<int64_t>(es), in + src * static_cast<int64_t>(es),
                static_cast<size_t>(run) * es);
    filled = dst + run;
    int64_t d = inner - 1;
    for (; d >= 0; --d) {
      src += xs[d];
      dst += ys[d];
      if (++coord[d] < count[d]) break;
      src -= xs[d] * count[d];
      dst -= ys[d] * count[d];
      coord[d] = 0;
    }
    if (d < 0) break;
  }
  fill_gap(filled, total);
}

Status Pad(KernelContext& c) {
  const Tensor& x = c.in(0);
  const int64_t rank = x.rank();
  std::vector<int64_t> pads;
  double value = 0;
  if (c.op().version < 11) {
    pads = c.op().Ints("pads");
    value = c.op().Float("value", 0.f);
  } else {
    auto p = IntsOf(c.input(1));
    if (!p) return c.Error("pads must be int64");
    pads = *p;
    if (c.has_input(2) && c.in(2).elements() > 0) value = ElementAsDouble(c.in(2), 0);
  }
  std::vector<int64_t> axes;
  if (c.op().version >= 18 && c.has_input(3)) {
    auto a = IntsOf(c.input(3));
    if (!a) return c.Error("axes must be int32 or int64");
    axes = std::move(*a);
  } else {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  if (pads.size() != 2 * axes.size()) return c.Error("pads does not match the axes");
  std::vector<int64_t> before(rank, 0), after(rank, 0);
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t a = axes[k];
    if (!NormaliseAxis(a, rank)) return c.Error("bad axis");
    before[a] = pads[k];
    after[a] = pads[k + axes.size()];
  }
  const std::string mode = c.op().String("mode", "constant");
  std::vector<int64_t> shape(rank);
  for (int64_t i = 0; i < rank; ++i) {
    // Bounded before adding so the sum cannot overflow; negative pads crop.
    const auto bounded = [](int64_t v) {
      return v >= -kMaxTensorElements && v <= kMaxTensorElements;
    };
    if (!bounded(before[i]) || !bounded(after[i])) return c.Error("pads must be within 2^40");
    shape[i] = x.shape()[i] + before[i] + after[i];
    if (shape[i] < 0) return c.Error("pads remove more than the axis' length");
  }
  if (mode == "constant" && x.dtype() != DataType::kString) {
    Tensor& y = c.OutputUninit(0, x.dtype(), shape);
    PadConstant(x, before, value, y);
    return Status::Ok();
  }
  Tensor& y = c.Output(0, x.dtype(), shape);
  const auto xs = Strides(x.shape());
  const auto ys = Strides(shape);
  for (int64_t i = 0; i < y.elements(); ++i) {
    int64_t rem = i, src = 0;
    bool outside = false;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t coord = rem / ys[d] - before[d];
      rem %= ys[d];
      const int64_t n = x.shape()[d];
      if (coord < 0 || coord >= n) {
        if (mode == "constant" || n == 0) {
          outside = true;
          break;
        }
        if (mode == "edge") {
          coord = std::clamp<int64_t>(coord, 0, n - 1);
        } else if (mode == "reflect") {
          const int64_t period = 2 * (n - 1);
          if (period == 0) {
            coord = 0;
          } else {
            coord = ((coord % period) + period) % period;
            if (coord >= n) coord = period - coord;
          }
        } else if (mode == "wrap") {
          coord = ((coord % n) + n) % n;
        } else {
          return c.Error("pad mode '" + mode + "' is not supported");
        }
      }
      src += coord * xs[d];
    }
    if (outside) {
      SetElementFromDouble(y, i, value);
    } else {
      CopyElement(x, src, y, i);
    }
  }
  return Status::Ok();
}

}  // namespace

void RegisterPaddingKernels(KernelTable& t) {
  t["Pad"] = Pad;
}

}  // namespace ortc::exec
