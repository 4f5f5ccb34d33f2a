// MaxPool, AveragePool and LpPool (oneDNN for float NHWC-friendly shapes, direct loops
// otherwise), and GlobalAveragePool / GlobalMaxPool.
#include <algorithm>
#include <cmath>
#include <limits>

#include "cpu/runtime/kernels/kernel_util.h"
#include "cpu/runtime/kernels/onednn_conv.h"
#include "cpu/runtime/kernels/registry.h"
#include "cpu/runtime/kernels/spatial_window.h"

namespace ortc::exec {
namespace {

enum class PoolKind { kMax, kAverage, kLp };

// Calls tap(ih, iw) for each input position of output (oh, ow)'s 2-D window that lies inside
// the H x W image, and returns the divisor AveragePool uses: those taps, plus the ones on the
// padding when count_pad.
template <typename F>
int64_t ForEachTap(const Window& w, int64_t oh, int64_t ow, int64_t H, int64_t W, bool count_pad,
                   F tap) {
  int64_t count = 0;
  for (int64_t kh = 0; kh < w.kernel[0]; ++kh) {
    const int64_t ih = oh * w.strides[0] - w.pads_begin[0] + kh * w.dilations[0];
    for (int64_t kw = 0; kw < w.kernel[1]; ++kw) {
      const int64_t iw = ow * w.strides[1] - w.pads_begin[1] + kw * w.dilations[1];
      if (ih < 0 || ih >= H || iw < 0 || iw >= W) {
        if (count_pad && ih < H + w.pads_end[0] && iw < W + w.pads_end[1]) ++count;
        continue;
      }
      tap(ih, iw);
      ++count;
    }
  }
  return count;
}

// Float NCHW fast path of MaxPool / AveragePool without indices.
void Pool2dFloat(const float* x, float* y, int64_t planes, int64_t H, int64_t W, const Window& w,
                 PoolKind kind, bool count_pad) {
  const int64_t OH = w.out[0], OW = w.out[1];
  for (int64_t p = 0; p < planes; ++p) {
    const float* plane = x + p * H * W;
    float* out = y + p * OH * OW;
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        float acc = kind == PoolKind::kMax ? -INFINITY : 0.f;
        const int64_t count = ForEachTap(w, oh, ow, H, W, count_pad, [&](int64_t ih, int64_t iw) {
          const float v = plane[ih * W + iw];
          acc = kind == PoolKind::kMax ? std::max(acc, v) : acc + v;
        });
        out[oh * OW + ow] =
            kind == PoolKind::kMax ? acc : (count ? acc / static_cast<float>(count) : 0.f);
      }
  }
}

// Float NHWC MaxPool / AveragePool: each output pixel is a run of C channels, so the inner loop
// is over contiguous channels.
void Pool2dFloatNhwc(const float* x, float* y, int64_t N, int64_t H, int64_t W, int64_t C,
                     const Window& w, PoolKind kind, bool count_pad) {
  const int64_t OH = w.out[0], OW = w.out[1];
#pragma omp parallel for collapse(2) if (N * OH * OW * C >= (1 << 17)) schedule(static)
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        float* out = y + ((n * OH + oh) * OW + ow) * C;
        std::fill(out, out + C, kind == PoolKind::kMax ? -INFINITY : 0.f);
        const int64_t count = ForEachTap(w, oh, ow, H, W, count_pad, [&](int64_t ih, int64_t iw) {
          const float* __restrict in = x + ((n * H + ih) * W + iw) * C;
          float* __restrict acc = out;
          // (a > b ? a : b) is exactly what the vector max instruction computes.
          if (kind == PoolKind::kMax) {
#pragma omp simd
            for (int64_t ch = 0; ch < C; ++ch) acc[ch] = acc[ch] > in[ch] ? acc[ch] : in[ch];
          } else {
#pragma omp simd
            for (int64_t ch = 0; ch < C; ++ch) acc[ch] += in[ch];
          }
        });
        if (kind != PoolKind::kMax) {
          const float inv = count ? 1.f / static_cast<float>(count) : 0.f;
          for (int64_t ch = 0; ch < C; ++ch) out[ch] *= inv;
        }
      }
}

Status Pool(KernelContext& c, PoolKind kind) {
  const Tensor& x = c.in(0);
  if (x.rank() < 3) return c.Error("pooling input must have rank >= 3");
  // channels_last (set by the compiler): x and y are NHWC, float, 2-D, without indices.
  if (c.op().Int("channels_last", 0) != 0) {
    if (x.rank() != 4 || x.dtype() != DataType::kFloat || kind == PoolKind::kLp ||
        c.wants_output(1))
      return c.Error("a channels_last pooling must be a float 2-D MaxPool or AveragePool");
    const std::vector<int64_t> spatial = {x.shape()[1], x.shape()[2]};
    auto w =
        MakeWindow(c.op(), spatial, c.op().Ints("kernel_shape"), c.op().Int("ceil_mode", 0) != 0);
    if (!w.ok()) return w.status();
    const int64_t N = x.shape()[0], C = x.shape()[3];
    Tensor& y = c.OutputUninit(0, x.dtype(), {N, w->out[0], w->out[1], C});
    const bool count_pad = c.op().Int("count_include_pad", 0) != 0;
    if (std::all_of(w->dilations.begin(), w->dilations.end(), [](int64_t d) { return d == 1; })) {
      PoolGeometry g{N,
                     C,
                     spatial,
                     w->out,
                     w->kernel,
                     w->strides,
                     w->pads_begin,
                     w->pads_end,
                     kind == PoolKind::kMax,
                     count_pad};
      bool handled = false;
      Status st = OneDnnPoolNhwc(c.op(), dynamic_cast<OneDnnPlanCache*>(c.op().cache.get()), g,
                                 x.data<float>(), y.mutable_data<float>(), &handled);
      if (!st.ok() || handled) return st;
    }
    Pool2dFloatNhwc(x.data<float>(), y.mutable_data<float>(), N, spatial[0], spatial[1], C, *w,
                    kind, c.op().Int("count_include_pad", 0) != 0);
    return Status::Ok();
  }
  const std::vector<int64_t> spatial(x.shape().begin() + 2, x.shape().end());
  auto w =
      MakeWindow(c.op(), spatial, c.op().Ints("kernel_shape"), c.op().Int("ceil_mode", 0) != 0);
  if (!w.ok()) return w.status();
  if (x.dtype() == DataType::kFloat && spatial.size() == 2 && kind != PoolKind::kLp &&
      !c.wants_output(1)) {
    std::vector<int64_t> shape = {x.shape()[0], x.shape()[1], w->out[0], w->out[1]};
    Tensor& y = c.OutputUninit(0, x.dtype(), shape);
    Pool2dFloat(x.data<float>(), y.mutable_data<float>(), x.shape()[0] * x.shape()[1], spatial[0],
                spatial[1], *w, kind, c.op().Int("count_include_pad", 0) != 0);
    return Status::Ok();
  }
  const int64_t N = x.shape()[0], C = x.shape()[1];
  std::vector<int64_t> out_shape = {N, C};
  out_shape.insert(out_shape.end(), w->out.begin(), w->out.end());
  Tensor& y = c.Output(0, x.dtype(), out_shape);
  Tensor* indices = c.wants_output(1) ? &c.Output(1, DataType::kInt64, out_shape) : nullptr;
  const bool count_pad = c.op().Int("count_include_pad", 0) != 0;
  const double p = static_cast<double>(c.op().Int("p", 2));
  const bool col_major = c.op().Int("storage_order", 0) != 0;
  const int64_t isize = Product(spatial), osize = Product(w->out), ksize = Product(w->kernel);
  const size_t nsp = spatial.size();
  const auto os = Strides(w->out), ks = Strides(w->kernel), is = Strides(spatial);
  for (int64_t nc = 0; nc < N * C; ++nc)
    for (int64_t o = 0; o < osize; ++o) {
      double acc = kind == PoolKind::kMax ? -INFINITY : 0;
      int64_t count = 0, best = -1;
      for (int64_t kk = 0; kk < ksize; ++kk) {
        int64_t src = 0;
        bool inside = true, in_padded = true;
        for (size_t d = 0; d < nsp; ++d) {
          const int64_t pos = ((o / os[d]) % w->out[d]) * w->strides[d] - w->pads_begin[d] +
                              ((kk / ks[d]) % w->kernel[d]) * w->dilations[d];
          inside = inside && pos >= 0 && pos < spatial[d];
          in_padded = in_padded && pos < spatial[d] + w->pads_end[d];
          src += pos * is[d];
        }
        if (!inside) {
          if (count_pad && in_padded) ++count;
          continue;
        }
        const double v = ElementAsDouble(x, nc * isize + src);
        ++count;
        if (kind == PoolKind::kMax) {
          if (v > acc || best < 0) {
            acc = v;
            best = src;
          }
        } else if (kind == PoolKind::kAverage) {
          acc += v;
        } else {
          acc += std::pow(std::fabs(v), p);
        }
      }
      if (kind == PoolKind::kAverage) acc = count ? acc / static_cast<double>(count) : 0;
      if (kind == PoolKind::kLp) acc = std::pow(acc, 1.0 / p);
      SetElementFromDouble(y, nc * osize + o, acc);
      if (indices) {
        int64_t flat = best;
        // best < 0: no tap inside the input (an empty axis), nothing to remap.
        if (best >= 0 && col_major && nsp == 2)
          flat = (best % spatial[1]) * spatial[0] + best / spatial[1];
        indices->mutable_data<int64_t>()[nc * osize + o] = nc * isize + flat;
      }
    }
  return Status::Ok();
}

Status GlobalPool(KernelContext& c, bool max) {
  const Tensor& x = c.in(0);
  // channels_last (set by the compiler): x is NHWC float; y is [N, C, 1, 1] as usual.
  if (c.op().Int("channels_last", 0) != 0) {
    if (x.rank() != 4 || x.dtype() != DataType::kFloat)
      return c.Error("a channels_last global pooling must read a float 4-D tensor");
    const int64_t N = x.shape()[0], HW = x.shape()[1] * x.shape()[2], C = x.shape()[3];
    Tensor& y = c.OutputUninit(0, x.dtype(), {N, C, 1, 1});
    std::vector<double> acc(static_cast<size_t>(C));
    for (int64_t n = 0; n < N; ++n) {
      std::fill(acc.begin(), acc.end(), max ? -INFINITY : 0.0);
      for (int64_t i = 0; i < HW; ++i) {
        const float* row = x.data<float>() + (n * HW + i) * C;
        for (int64_t ch = 0; ch < C; ++ch)
          acc[ch] = max ? std::max<double>(acc[ch], row[ch]) : acc[ch] + row[ch];
      }
      for (int64_t ch = 0; ch < C; ++ch)
        y.mutable_data<float>()[n * C + ch] =
            static_cast<float>(max ? acc[ch] : acc[ch] / static_cast<double>(HW));
    }
    return Status::Ok();
  }
  if (x.rank() < 2) return c.Error("global pooling needs an input of rank >= 2 (N, C, ...)");
  std::vector<int64_t> shape = {x.shape()[0], x.shape()[1]};
  for (int64_t d = 2; d < x.rank(); ++d) shape.push_back(1);
  Tensor& y = c.Output(0, x.dtype(), shape);
  const int64_t inner = Product(x.shape(), 2);
  if (x.dtype() == DataType::kFloat) {
    for (int64_t nc = 0; nc < x.shape()[0] * x.shape()[1]; ++nc) {
      const float* p = x.data<float>() + nc * inner;
      double acc = max ? -INFINITY : 0;
      for (int64_t i = 0; i < inner; ++i) acc = max ? std::max<double>(acc, p[i]) : acc + p[i];
      y.mutable_data<float>()[nc] =
          static_cast<float>(max ? acc : acc / static_cast<double>(inner));
    }
    return Status::Ok();
  }
  for (int64_t nc = 0; nc < x.shape()[0] * x.shape()[1]; ++nc) {
    double acc = max ? -INFINITY : 0;
    for (int64_t i = 0; i < inner; ++i) {
      const double v = ElementAsDouble(x, nc * inner + i);
      acc = max ? std::max(acc, v) : acc + v;
    }
    SetElementFromDouble(y, nc, max ? acc : acc / static_cast<double>(inner));
  }
  return Status::Ok();
}

}  // namespace

void RegisterPoolKernels(KernelTable& t) {
  t["MaxPool"] = [](KernelContext& c) { return Pool(c, PoolKind::kMax); };
  t["AveragePool"] = [](KernelContext& c) { return Pool(c, PoolKind::kAverage); };
  t["LpPool"] = [](KernelContext& c) { return Pool(c, PoolKind::kLp); };
  t["GlobalAveragePool"] = [](KernelContext& c) { return GlobalPool(c, false); };
  t["GlobalMaxPool"] = [](KernelContext& c) { return GlobalPool(c, true); };
}

}  // namespace ortc::exec
