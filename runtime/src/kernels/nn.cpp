// Neural-network kernels: MatMul and Gemm (OpenBLAS), Conv and ConvTranspose (im2col + GEMM),
// pooling, normalisations, Softmax family, Resize.
#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "kernels/fused_activation.h"
#include "kernels/integer_conv.h"
#include "kernels/kernel_util.h"
#include "kernels/onednn_conv.h"
#include "kernels/registry.h"

namespace ortc::exec {
namespace {

// C[m x n] = alpha * op(A) op(B) + beta * C, row-major float.
void Sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  // oneDNN's GEMM: JIT kernels for this machine's ISA, threaded by the same OpenMP pool as the
  // convolutions (OpenBLAS would start a second pool of threads).
  if (dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) ==
      dnnl_success)
    return;
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

// Float view of any floating tensor (converted copy for half types and double).
std::vector<float> AsFloats(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.elements()));
  if (t.dtype() == DataType::kFloat) {
    if (!v.empty()) std::memcpy(v.data(), t.raw(), v.size() * 4);  // empty: both may be null
  } else {
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = static_cast<float>(ReadAsDouble(t, static_cast<int64_t>(i)));
  }
  return v;
}

void StoreFloats(Tensor& t, const std::vector<float>& v) {
  if (t.dtype() == DataType::kFloat) {
    if (!v.empty()) std::memcpy(t.mutable_raw(), v.data(), v.size() * 4);
  } else {
    for (size_t i = 0; i < v.size(); ++i) WriteFromDouble(t, static_cast<int64_t>(i), v[i]);
  }
}

// Float views without copies when the tensor already holds float32.
struct FloatView {
  std::vector<float> copy;
  const float* data;
  explicit FloatView(const Tensor& t) {
    if (t.dtype() == DataType::kFloat) {
      data = t.data<float>();
    } else {
      copy = AsFloats(t);
      data = copy.data();
    }
  }
};

Status MatMul(KernelContext& c) {
  const Tensor& a = c.in(0);
  const Tensor& b = c.in(1);
  if (a.rank() == 0 || b.rank() == 0) return c.Error("MatMul inputs must have rank >= 1");
  std::vector<int64_t> as = a.shape(), bs = b.shape();
  const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  if (bs[bs.size() - 2] != k) return c.Error("MatMul inner dimensions differ");
  auto batch = BroadcastShape({std::vector<int64_t>(as.begin(), as.end() - 2),
                               std::vector<int64_t>(bs.begin(), bs.end() - 2)});
  if (!batch) return c.Error("MatMul batch dimensions cannot be broadcast");
  std::vector<int64_t> out = *batch;
  if (!a_vec) out.push_back(m);
  if (!b_vec) out.push_back(n);
  Tensor& y = c.Output(0, a.dtype(), out);
  const auto sa = BroadcastStrides(std::vector<int64_t>(as.begin(), as.end() - 2), *batch);
  const auto sb = BroadcastStrides(std::vector<int64_t>(bs.begin(), bs.end() - 2), *batch);
  const int64_t batches = Product(*batch);
  if (a.dtype() == DataType::kFloat && b.dtype() == DataType::kFloat) {
    ForEachBroadcast(*batch, {sa, sb}, [&](int64_t i, const std::vector<int64_t>& o) {
      Sgemm(false, false, m, n, k, 1.f, a.data<float>() + o[0] * m * k, k,
            b.data<float>() + o[1] * k * n, n, 0.f, y.mutable_data<float>() + i * m * n, n);
    });
    (void)batches;
    return Status::Ok();
  }
  ForEachBroadcast(*batch, {sa, sb}, [&](int64_t i, const std::vector<int64_t>& o) {
    for (int64_t r = 0; r < m; ++r)
      for (int64_t col = 0; col < n; ++col) {
        double acc = 0;
        for (int64_t j = 0; j < k; ++j)
          acc += ReadAsDouble(a, o[0] * m * k + r * k + j) *
                 ReadAsDouble(b, o[1] * k * n + j * n + col);
        WriteFromDouble(y, i * m * n + r * n + col, acc);
      }
  });
  return Status::Ok();
}

Status Gemm(KernelContext& c) {
  const Tensor& a = c.in(0);
  const Tensor& b = c.in(1);
  const bool ta = c.op().Int("transA", 0) != 0, tb = c.op().Int("transB", 0) != 0;
  const float alpha = c.op().Float("alpha", 1.f), beta = c.op().Float("beta", 1.f);
  if (a.rank() != 2 || b.rank() != 2) return c.Error("Gemm inputs must be 2-D");
  const int64_t m = ta ? a.shape()[1] : a.shape()[0], k = ta ? a.shape()[0] : a.shape()[1];
  const int64_t n = tb ? b.shape()[0] : b.shape()[1];
  if ((tb ? b.shape()[1] : b.shape()[0]) != k) return c.Error("Gemm inner dimensions differ");
  Tensor& y = c.Output(0, a.dtype(), {m, n});
  std::vector<float> out(static_cast<size_t>(m * n), 0.f);
  if (c.has_input(2) && beta != 0.f) {
    const Tensor& bias = c.in(2);
    auto shape = BroadcastShape({bias.shape(), {m, n}});
    if (!shape || *shape != std::vector<int64_t>{m, n})
      return c.Error("Gemm bias cannot be broadcast to the output");
    const auto cf = AsFloats(bias);
    ForEachBroadcast({m, n}, {BroadcastStrides(bias.shape(), {m, n})},
                     [&](int64_t i, const std::vector<int64_t>& o) { out[i] = cf[o[0]]; });
  }
  const FloatView af(a), bf(b);
  Sgemm(ta, tb, m, n, k, alpha, af.data, a.shape()[1], bf.data, b.shape()[1], beta, out.data(), n);
  StoreFloats(y, out);
  return Status::Ok();
}

// Spatial geometry shared by Conv and pooling.
struct Window {
  std::vector<int64_t> in, kernel, strides, dilations, pads_begin, pads_end, out;
};

Result<Window> MakeWindow(const ExecOp& op, const std::vector<int64_t>& in_spatial,
                          std::vector<int64_t> kernel, bool ceil_mode = false) {
  const size_t n = in_spatial.size();
  Window w;
  w.in = in_spatial;
  w.kernel = std::move(kernel);
  w.strides = op.Ints("strides", std::vector<int64_t>(n, 1));
  w.dilations = op.Ints("dilations", std::vector<int64_t>(n, 1));
  auto pads = op.Ints("pads", std::vector<int64_t>(2 * n, 0));
  if (w.kernel.size() != n || w.strides.size() != n || w.dilations.size() != n ||
      pads.size() != 2 * n) {
    return InvalidArgument(
        "kernel_shape, strides, dilations or pads do not match the spatial rank");
  }
  // Bounded so the geometry below cannot overflow 64 bits (a corrupt program can hold anything).
  constexpr int64_t kMaxWindow = int64_t{1} << 31;
  for (size_t i = 0; i < n; ++i)
    if (w.kernel[i] < 1 || w.strides[i] < 1 || w.dilations[i] < 1)
      return InvalidArgument("kernel_shape, strides and dilations must be at least 1");
  for (size_t i = 0; i < n; ++i)
    if (w.kernel[i] > kMaxWindow || w.strides[i] > kMaxWindow || w.dilations[i] > kMaxWindow)
      return InvalidArgument("kernel_shape, strides and dilations must be below 2^31");
  for (int64_t p : pads)
    if (p < 0 || p > kMaxWindow) return InvalidArgument("pads must be in [0, 2^31]");
  w.pads_begin.assign(pads.begin(), pads.begin() + n);
  w.pads_end.assign(pads.begin() + n, pads.end());
  const std::string auto_pad = op.String("auto_pad", "NOTSET");
  w.out.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t eff = w.dilations[i] * (w.kernel[i] - 1) + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      w.out[i] = (w.in[i] + w.strides[i] - 1) / w.strides[i];
      const int64_t total = std::max<int64_t>(0, (w.out[i] - 1) * w.strides[i] + eff - w.in[i]);
      w.pads_begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.pads_end[i] = total - w.pads_begin[i];
    } else {
      if (auto_pad == "VALID") w.pads_begin[i] = w.pads_end[i] = 0;
      const int64_t span = w.in[i] + w.pads_begin[i] + w.pads_end[i] - eff;
      if (span < 0) return InvalidArgument("the kernel is larger than the padded input");
      w.out[i] = (ceil_mode ? (span + w.strides[i] - 1) / w.strides[i] : span / w.strides[i]) + 1;
      if (ceil_mode && (w.out[i] - 1) * w.strides[i] >= w.in[i] + w.pads_begin[i]) --w.out[i];
    }
  }
  return w;
}

// 2-D im2col for one image and channel group: rows (channel, kh, kw), columns output pixels.
void Im2Col2d(const float* x, int64_t channels, int64_t H, int64_t W, const Window& w, float* col) {
  const int64_t OH = w.out[0], OW = w.out[1], KH = w.kernel[0], KW = w.kernel[1];
  for (int64_t ch = 0; ch < channels; ++ch)
    for (int64_t kh = 0; kh < KH; ++kh)
      for (int64_t kw = 0; kw < KW; ++kw) {
        float* row = col + ((ch * KH + kh) * KW + kw) * OH * OW;
        const float* plane = x + ch * H * W;
        for (int64_t oh = 0; oh < OH; ++oh) {
          const int64_t ih = oh * w.strides[0] - w.pads_begin[0] + kh * w.dilations[0];
          float* out = row + oh * OW;
          if (ih < 0 || ih >= H) {
            std::fill(out, out + OW, 0.f);
            continue;
          }
          const float* line = plane + ih * W;
          for (int64_t ow = 0; ow < OW; ++ow) {
            const int64_t iw = ow * w.strides[1] - w.pads_begin[1] + kw * w.dilations[1];
            out[ow] = (iw >= 0 && iw < W) ? line[iw] : 0.f;
          }
        }
      }
}

// Depthwise 2-D convolution (one input channel per output channel): a direct loop.
void Depthwise2d(const float* x, const float* wt, const float* bias, int64_t C, int64_t H,
                 int64_t W, const Window& w, float* y) {
  // Row by row: for each kernel tap, one multiply-add over the output row's columns whose input
  // column is inside the image (found once per tap, so the inner loop has no bounds test and,
  // at stride 1, reads contiguously and vectorises). Each output still sums bias then taps in
  // kh-major, kw-minor order, as the element-by-element form did.
  const int64_t OH = w.out[0], OW = w.out[1], KH = w.kernel[0], KW = w.kernel[1];
  const int64_t sh = w.strides[0], sw = w.strides[1], dh = w.dilations[0], dw = w.dilations[1];
  for (int64_t ch = 0; ch < C; ++ch) {
    const float* plane = x + ch * H * W;
    const float* k = wt + ch * KH * KW;
    const float b = bias ? bias[ch] : 0.f;
    for (int64_t oh = 0; oh < OH; ++oh) {
      float* orow = y + (ch * OH + oh) * OW;
      for (int64_t ow = 0; ow < OW; ++ow) orow[ow] = b;
      for (int64_t kh = 0; kh < KH; ++kh) {
        const int64_t ih = oh * sh - w.pads_begin[0] + kh * dh;
        if (ih < 0 || ih >= H) continue;
        const float* irow = plane + ih * W;
        for (int64_t kw = 0; kw < KW; ++kw) {
          const float kv = k[kh * KW + kw];
          const int64_t off = kw * dw - w.pads_begin[1];  // input column of output column 0
          // Output columns ow with 0 <= ow * sw + off < W.
          const int64_t lo = off < 0 ? (-off + sw - 1) / sw : 0;
          const int64_t hi = W - 1 - off < 0 ? 0 : std::min(OW, (W - 1 - off) / sw + 1);
          if (sw == 1) {
            const float* in = irow + off;
            for (int64_t ow = lo; ow < hi; ++ow) orow[ow] += kv * in[ow];
          } else {
            for (int64_t ow = lo; ow < hi; ++ow) orow[ow] += kv * irow[ow * sw + off];
          }
        }
      }
    }
  }
}

Status Conv(KernelContext& c) {
  const Tensor& x = c.in(0);
  const Tensor& wt = c.in(1);
  if (x.rank() < 3) return c.Error("Conv input must have rank >= 3");
  auto* cache = dynamic_cast<OneDnnConvCache*>(c.op().cache.get());
  const Tensor* residual = c.input(3);
  const bool bias_float = !c.has_input(2) || c.in(2).dtype() == DataType::kFloat;
  // Weights the compiler packed for oneDNN (--target-isa): raw bytes in oneDNN's layout, with
  // their logical OIHW shape in weight_shape.
  const bool packed = cache && !cache->packed_desc.empty();
  const bool weights_ok = packed || wt.dtype() == DataType::kFloat;
  // Plans are kept per shapes of x, w and b: weights or a bias fed as graph inputs may change
  // shape between runs, and a plan made for others would read past them.
  std::vector<int64_t> plan_key = x.shape();
  plan_key.push_back(-1);
  plan_key.insert(plan_key.end(), wt.shape().begin(), wt.shape().end());
  plan_key.push_back(c.has_input(2) ? c.in(2).elements() : -1);
  if (cache && x.dtype() == DataType::kFloat && weights_ok && bias_float) {
    // Shapes seen before: their plan knows the output shape and holds the primitive.
    const std::vector<int64_t>* out_shape = nullptr;
    if (const void* plan = FindConvPlan(cache, plan_key, &out_shape)) {
      if (residual && (residual->shape() != *out_shape || residual->dtype() != x.dtype()))
        return c.Error("FusedConv residual does not match the output's shape and type");
      Tensor& y = c.OutputUninit(0, x.dtype(), *out_shape);
      return RunConvPlan(c.op(), plan, x.data<float>(), wt.raw(),
                         c.has_input(2) ? c.in(2).data<float>() : nullptr,
                         residual ? residual->data<float>() : nullptr, y.mutable_data<float>());
    }
  }
  const std::vector<int64_t> w_shape = packed ? c.op().Ints("weight_shape") : wt.shape();
  if (w_shape.size() != x.rank()) return c.Error("Conv weights must have the input's rank");
  // channels_last (set by the compiler on float 2-D convolutions): x, residual and y are NHWC.
  const bool channels_last = c.op().Int("channels_last", 0) != 0;
  // input_channels_first: a channels_last Conv reading an NCHW x (the model's image).
  const bool x_nhwc = channels_last && c.op().Int("input_channels_first", 0) == 0;
  if (channels_last && x.rank() != 4) return c.Error("a channels_last Conv must be 2-D");
  const int64_t N = x.shape()[0], C = x.shape()[x_nhwc ? 3 : 1], M = w_shape[0];
  const int64_t group = c.op().Int("group", 1);
  const std::vector<int64_t> spatial =
      x_nhwc ? std::vector<int64_t>{x.shape()[1], x.shape()[2]}
             : std::vector<int64_t>(x.shape().begin() + 2, x.shape().end());
  // The weights' own spatial shape: a different kernel_shape would read past them.
  const std::vector<int64_t> kernel(w_shape.begin() + 2, w_shape.end());
  if (c.op().Ints("kernel_shape", kernel) != kernel)
    return c.Error("Conv kernel_shape does not match the weights' spatial shape");
  auto w = MakeWindow(c.op(), spatial, kernel);
  if (!w.ok()) return w.status();
  // group <= max(C, 1): C = 0 is divisible by any group, and the loops run group times.
  if (group <= 0 || group > std::max<int64_t>(C, 1) || C % group != 0 || M % group != 0 ||
      w_shape[1] != C / group)
    return c.Error("Conv channels do not match the weights and groups");
  if (c.has_input(2) && c.in(2).elements() != M)
    return c.Error("Conv bias must have " + std::to_string(M) +
                   " elements (one per output "
                   "channel), got " +
                   std::to_string(c.in(2).elements()));
  std::vector<int64_t> out_shape = {N, M};
  out_shape.insert(out_shape.end(), w->out.begin(), w->out.end());
  if (channels_last) out_shape = {N, w->out[0], w->out[1], M};
  // FusedConv (made by the compiler): a residual added before the activation, as input 3.
  auto act = ReadFusedActivation(c.op());
  if (!act.ok()) return act.status();
  if (residual && (residual->shape() != out_shape || residual->dtype() != x.dtype()))
    return c.Error("FusedConv residual does not match the output's shape and type");
  Tensor& y = c.OutputUninit(0, x.dtype(), out_shape);
  const bool all_float = x.dtype() == DataType::kFloat && weights_ok && bias_float;
  if (channels_last && !all_float) return c.Error("a channels_last Conv must be float");
  // Packed weights are in oneDNN's layout, which the plain loops below would read as OIHW.
  if (packed && !all_float) return c.Error("a Conv with packed weights must be float");
  if (all_float && spatial.size() <= 3) {
    ConvGeometry g{
        N,           C,     M, group, spatial, kernel, w->strides, w->dilations, w->pads_begin,
        w->pads_end, w->out};
    g.channels_last = channels_last;
    g.input_nchw = channels_last && !x_nhwc;
    g.bf16 = c.op().String("compute_precision", "fp32") == "bf16";
    g.algorithm = ParseConvAlgorithm(c.op().String("conv_algorithm", "auto"));
    bool handled = false;
    Status st = OneDnnConv(c.op(), cache, g, x.data<float>(), wt.raw(),
                           c.has_input(2) ? c.in(2).data<float>() : nullptr,
                           residual ? residual->data<float>() : nullptr, *act, plan_key, out_shape,
                           y.mutable_data<float>(), &handled);
    if (!st.ok() || handled) return st;
    if (packed)
      return c.Error(
          "oneDNN has no convolution for this Conv's packed weights; recompile the "
          "model with --target-isa portable");
    if (channels_last)
      return c.Error(
          "oneDNN has no convolution for this channels_last Conv; recompile the model "
          "for this machine");
  }
  const int64_t cg = C / group, mg = M / group, ksize = Product(kernel), osize = Product(w->out),
                isize = Product(spatial);
  const size_t nsp = spatial.size();
  const FloatView xv(x), wv(wt);
  std::unique_ptr<FloatView> bv = c.has_input(2) ? std::make_unique<FloatView>(c.in(2)) : nullptr;
  std::vector<float> out_copy;
  float* out = y.dtype() == DataType::kFloat ? y.mutable_data<float>() : nullptr;
  if (!out) {
    out_copy.assign(static_cast<size_t>(N * M * osize), 0.f);
    out = out_copy.data();
  }
  const bool two_d = nsp == 2;
  const bool pointwise =
      ksize == 1 &&
      std::all_of(w->strides.begin(), w->strides.end(), [](int64_t s) { return s == 1; }) &&
      std::all_of(w->pads_begin.begin(), w->pads_begin.end(), [](int64_t p) { return p == 0; }) &&
      std::all_of(w->pads_end.begin(), w->pads_end.end(), [](int64_t p) { return p == 0; });
  const bool depthwise = two_d && group == C && M == C && cg == 1;
  std::unique_ptr<float[]> col(
      pointwise || depthwise ? nullptr : new float[static_cast<size_t>(cg * ksize * osize)]);
  const auto out_strides = Strides(w->out), k_strides = Strides(kernel),
             in_strides = Strides(spatial);
  for (int64_t n = 0; n < N; ++n) {
    if (depthwise) {
      Depthwise2d(xv.data + n * C * isize, wv.data, bv ? bv->data : nullptr, C, spatial[0],
                  spatial[1], *w, out + n * M * osize);
      continue;
    }
    for (int64_t g = 0; g < group; ++g) {
      const float* xin = xv.data + (n * C + g * cg) * isize;
      const float* colp = xin;  // a pointwise convolution is a plain GEMM on the input
      if (!pointwise) {
        if (two_d) {
          Im2Col2d(xin, cg, spatial[0], spatial[1], *w, col.get());
        } else {
          for (int64_t ch = 0; ch < cg; ++ch)
            for (int64_t kk = 0; kk < ksize; ++kk)
              for (int64_t o = 0; o < osize; ++o) {
                int64_t src = 0;
                bool inside = true;
                for (size_t d = 0; d < nsp && inside; ++d) {
                  const int64_t oc = (o / out_strides[d]) % w->out[d],
                                kc = (kk / k_strides[d]) % kernel[d];
                  const int64_t pos = oc * w->strides[d] - w->pads_begin[d] + kc * w->dilations[d];
                  inside = pos >= 0 && pos < spatial[d];
                  src += pos * in_strides[d];
                }
                col[(ch * ksize + kk) * osize + o] = inside ? xin[ch * isize + src] : 0.f;
              }
        }
        colp = col.get();
      }
      Sgemm(false, false, mg, osize, cg * ksize, 1.f, wv.data + g * mg * cg * ksize, cg * ksize,
            colp, osize, 0.f, out + (n * M + g * mg) * osize, osize);
    }
    if (bv) {
      for (int64_t m = 0; m < M; ++m) {
        float* o = out + (n * M + m) * osize;
        const float b = bv->data[m];
        for (int64_t i = 0; i < osize; ++i) o[i] += b;
      }
    }
  }
  if (residual) {
    // The compiler may place y in the residual's buffer (the sum post-op's in-place form); these
    // loops have overwritten it by now, so that case cannot run here.
    if (residual->raw() == y.raw())
      return c.Error(
          "FusedConv's output shares its residual's buffer, which only oneDNN's "
          "convolution supports; recompile the model with this version of ortc");
    const FloatView rv(*residual);
    for (int64_t i = 0; i < N * M * osize; ++i) out[i] += rv.data[i];
  }
  ApplyFusedActivation(*act, out, N * M * osize);
  if (!out_copy.empty()) StoreFloats(y, out_copy);
  return Status::Ok();
}

// 2-D col2im of ConvTranspose: adds col[(m, kh, kw), (ih, iw)] into out[m, oh, ow] with
// oh = ih * sh - ph + kh * dh (ow likewise), row by row over the input columns whose output
// column is inside (found once per tap, so the inner loop has no bounds test or index
// arithmetic). Contributions reach each output in the same (tap, input position) order as the
// N-d loop, so results are bit-identical to it.
void Col2Im2d(const float* col, int64_t mg, const std::vector<int64_t>& in,
              const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
              const std::vector<int64_t>& dil, const std::vector<int64_t>& pads,
              const std::vector<int64_t>& out, float* res) {
  const int64_t H = in[0], W = in[1], KH = kernel[0], KW = kernel[1], OH = out[0], OW = out[1];
  const int64_t sh = strides[0], sw = strides[1];
  for (int64_t m = 0; m < mg; ++m)
    for (int64_t kh = 0; kh < KH; ++kh)
      for (int64_t kw = 0; kw < KW; ++kw) {
        const float* tap = col + ((m * KH + kh) * KW + kw) * H * W;
        const int64_t off = kw * dil[1] - pads[1];  // output column of input column 0
        // Input columns iw with 0 <= iw * sw + off < OW.
        const int64_t lo = off < 0 ? (-off + sw - 1) / sw : 0;
        const int64_t hi = OW - 1 - off < 0 ? 0 : std::min(W, (OW - 1 - off) / sw + 1);
        for (int64_t ih = 0; ih < H; ++ih) {
          const int64_t oh = ih * sh - pads[0] + kh * dil[0];
          if (oh < 0 || oh >= OH) continue;
          const float* src = tap + ih * W;
          float* row = res + (m * OH + oh) * OW;
          for (int64_t iw = lo; iw < hi; ++iw) row[iw * sw + off] += src[iw];
        }
      }
}

Status ConvTranspose(KernelContext& c) {
  const Tensor& x = c.in(0);
  const Tensor& wt = c.in(1);
  if (x.rank() < 3) return c.Error("ConvTranspose input must have rank >= 3");
  if (wt.rank() != x.rank()) return c.Error("ConvTranspose weights must have the input's rank");
  const int64_t N = x.shape()[0], C = x.shape()[1], group = c.op().Int("group", 1);
  const int64_t mg = wt.shape()[1];
  const std::vector<int64_t> spatial(x.shape().begin() + 2, x.shape().end());
  const size_t nsp = spatial.size();
  // The weights' own spatial shape: a different kernel_shape would read past them.
  const std::vector<int64_t> kernel(wt.shape().begin() + 2, wt.shape().end());
  if (c.op().Ints("kernel_shape", kernel) != kernel)
    return c.Error("ConvTranspose kernel_shape does not match the weights' spatial shape");
  auto strides = c.op().Ints("strides", std::vector<int64_t>(nsp, 1));
  auto dil = c.op().Ints("dilations", std::vector<int64_t>(nsp, 1));
  auto pads = c.op().Ints("pads", std::vector<int64_t>(2 * nsp, 0));
  auto out_pad = c.op().Ints("output_padding", std::vector<int64_t>(nsp, 0));
  auto out_req = c.op().Ints("output_shape");
  const std::string auto_pad = c.op().String("auto_pad", "NOTSET");
  // Everything indexed below, checked first (Conv's window does the same in MakeWindow).
  // Checked before dividing by group or multiplying by it; group <= max(C, 1) as in Conv.
  if (group < 1 || group > std::max<int64_t>(C, 1) || C % group != 0 || wt.shape()[0] != C)
    return c.Error("ConvTranspose channels do not match the weights and groups");
  const int64_t M = mg * group, cg = C / group;
  if (strides.size() != nsp || dil.size() != nsp || pads.size() != 2 * nsp ||
      out_pad.size() != nsp || (!out_req.empty() && out_req.size() < nsp))
    return c.Error(
        "ConvTranspose strides, dilations, pads, output_padding or output_shape do not match "
        "the spatial rank");
  constexpr int64_t kMaxWindow = int64_t{1} << 31;  // keeps the geometry within 64 bits
  auto in_range = [](const std::vector<int64_t>& v, int64_t lo) {
    return std::all_of(v.begin(), v.end(), [&](int64_t x) { return x >= lo && x <= kMaxWindow; });
  };
  if (!in_range(strides, 1) || !in_range(dil, 1) || !in_range(pads, 0) || !in_range(out_pad, 0) ||
      !in_range(out_req, 1) || !in_range(spatial, 0) || !in_range(kernel, 0))
    return c.Error(
        "ConvTranspose strides and dilations must be in [1, 2^31], pads and output_padding in "
        "[0, 2^31], output_shape in [1, 2^31]");
  if (c.has_input(2) && c.in(2).elements() != M)
    return c.Error("ConvTranspose bias must have " + std::to_string(M) + " elements");
  std::vector<int64_t> out(nsp);
  for (size_t d = 0; d < nsp; ++d) {
    const int64_t full =
        strides[d] * (spatial[d] - 1) + out_pad[d] + ((kernel[d] - 1) * dil[d] + 1);
    if (!out_req.empty()) {
      out[d] = out_req[out_req.size() - nsp + d];
      const int64_t total = std::max<int64_t>(0, full - out[d]);
      pads[d] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[d + nsp] = total - pads[d];
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out[d] = spatial[d] * strides[d];
      const int64_t total = std::max<int64_t>(0, full - out[d]);
      pads[d] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[d + nsp] = total - pads[d];
    } else {
      out[d] = full - pads[d] - pads[d + nsp];
    }
    if (out[d] < 0) return c.Error("ConvTranspose pads leave a negative output size");
  }
  std::vector<int64_t> out_shape = {N, M};
  out_shape.insert(out_shape.end(), out.begin(), out.end());
  Tensor& y = c.Output(0, x.dtype(), out_shape);
  const int64_t isize = Product(spatial), ksize = Product(kernel), osize = Product(out);
  const FloatView xv(x), wv(wt);
  const float* xf = xv.data;
  const float* wf = wv.data;
  // Float outputs are accumulated in place (Output zero-filled them); the column buffer is
  // per thread and kept, so no run allocates (and page-faults) these large buffers again.
  std::vector<float> result_copy;
  float* result = y.dtype() == DataType::kFloat ? y.mutable_data<float>() : nullptr;
  if (!result) {
    result_copy.assign(static_cast<size_t>(N * M * osize), 0.f);
    result = result_copy.data();
  }
  thread_local std::vector<float> col;
  if (col.size() < static_cast<size_t>(mg * ksize * isize))
    col.resize(static_cast<size_t>(mg * ksize * isize));
  const auto is = Strides(spatial), ks = Strides(kernel), os = Strides(out);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < group; ++g) {
      // col[mg*ksize, isize] = W_g^T [mg*ksize, cg] x X_g [cg, isize]
      Sgemm(true, false, mg * ksize, isize, cg, 1.f, wf + g * cg * mg * ksize, mg * ksize,
            xf + (n * C + g * cg) * isize, isize, 0.f, col.data(), isize);
      float* res = result + (n * M + g * mg) * osize;
      if (nsp == 2) {
        Col2Im2d(col.data(), mg, spatial, kernel, strides, dil, pads, out, res);
        continue;
      }
      for (int64_t m = 0; m < mg; ++m)
        for (int64_t kk = 0; kk < ksize; ++kk)
          for (int64_t i = 0; i < isize; ++i) {
            int64_t dst = 0;
            bool inside = true;
            for (size_t d = 0; d < nsp && inside; ++d) {
              const int64_t ic = (i / is[d]) % spatial[d], kc = (kk / ks[d]) % kernel[d];
              const int64_t pos = ic * strides[d] - pads[d] + kc * dil[d];
              inside = pos >= 0 && pos < out[d];
              dst += pos * os[d];
            }
            if (inside)
              result[(n * M + g * mg + m) * osize + dst] += col[(m * ksize + kk) * isize + i];
          }
    }
  if (c.has_input(2)) {
    const FloatView bv(c.in(2));
    for (int64_t n = 0; n < N; ++n)
      for (int64_t m = 0; m < M; ++m)
        for (int64_t o = 0; o < osize; ++o) result[(n * M + m) * osize + o] += bv.data[m];
  }
  if (!result_copy.empty()) StoreFloats(y, result_copy);
  return Status::Ok();
}

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
        const double v = ReadAsDouble(x, nc * isize + src);
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
      WriteFromDouble(y, nc * osize + o, acc);
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
      const double v = ReadAsDouble(x, nc * inner + i);
      acc = max ? std::max(acc, v) : acc + v;
    }
    WriteFromDouble(y, nc, max ? acc : acc / static_cast<double>(inner));
  }
  return Status::Ok();
}

Status BatchNormalization(KernelContext& c) {
  const Tensor& x = c.in(0);
  if (x.rank() < 2) return c.Error("BatchNormalization input must be (N, C, ...)");
  const auto scale = AsFloats(c.in(1)), bias = AsFloats(c.in(2));
  auto mean = AsFloats(c.in(3)), var = AsFloats(c.in(4));
  const int64_t C = x.shape()[1], inner = Product(x.shape(), 2), N = x.shape()[0];
  // Each of them is read at every channel.
  for (const size_t n : {scale.size(), bias.size(), mean.size(), var.size()}) {
    if (static_cast<int64_t>(n) != C)
      return c.Error("BatchNormalization scale, B, input_mean and input_var must each have C = " +
                     std::to_string(C) + " elements; one has " + std::to_string(n));
  }
  const double eps = c.op().Float("epsilon", 1e-5f);
  Tensor& y = c.Output(0, x.dtype(), x.shape());
  if (c.op().Int("training_mode", 0) != 0) {
    // Normalise with the batch's statistics; also output the updated running statistics.
    const double momentum = c.op().Float("momentum", 0.9f);
    Tensor* run_mean = c.wants_output(1) ? &c.Output(1, c.in(3).dtype(), {C}) : nullptr;
    Tensor* run_var = c.wants_output(2) ? &c.Output(2, c.in(4).dtype(), {C}) : nullptr;
    for (int64_t ch = 0; ch < C; ++ch) {
      double m = 0, sq = 0;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < inner; ++i) m += ReadAsDouble(x, (n * C + ch) * inner + i);
      m /= static_cast<double>(N * inner);
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < inner; ++i)
          sq += std::pow(ReadAsDouble(x, (n * C + ch) * inner + i) - m, 2);
      const double v = sq / static_cast<double>(N * inner);
      if (run_mean) WriteFromDouble(*run_mean, ch, mean[ch] * momentum + m * (1 - momentum));
      if (run_var) WriteFromDouble(*run_var, ch, var[ch] * momentum + v * (1 - momentum));
      mean[ch] = static_cast<float>(m);
      var[ch] = static_cast<float>(v);
    }
  }
  if (x.dtype() == DataType::kFloat) {
    // y = x * k + (bias - mean * k): one float multiply-add per element (k in double first).
    const float* in = x.data<float>();
    float* out = y.mutable_data<float>();
#pragma omp parallel for collapse(2) if (N * C * inner >= (1 << 15)) schedule(static)
    for (int64_t n = 0; n < N; ++n)
      for (int64_t ch = 0; ch < C; ++ch) {
        const double kd = scale[ch] / std::sqrt(var[ch] + eps);
        const float k = static_cast<float>(kd), b = static_cast<float>(bias[ch] - mean[ch] * kd);
        const float* xi = in + (n * C + ch) * inner;
        float* yi = out + (n * C + ch) * inner;
        for (int64_t i = 0; i < inner; ++i) yi[i] = xi[i] * k + b;
      }
    return Status::Ok();
  }
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ch = 0; ch < C; ++ch) {
      const double k = scale[ch] / std::sqrt(var[ch] + eps);
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t at = (n * C + ch) * inner + i;
        WriteFromDouble(y, at, (ReadAsDouble(x, at) - mean[ch]) * k + bias[ch]);
      }
    }
  return Status::Ok();
}

// Normalises groups of `size` consecutive elements, then applies per-position scale/bias.
void NormaliseRows(const Tensor& x, Tensor& y, int64_t rows, int64_t size, double eps,
                   const std::function<double(int64_t row, int64_t i, double v)>& affine) {
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, sq = 0;
    for (int64_t i = 0; i < size; ++i) mean += ReadAsDouble(x, r * size + i);
    mean /= static_cast<double>(size);
    for (int64_t i = 0; i < size; ++i) {
      const double d = ReadAsDouble(x, r * size + i) - mean;
      sq += d * d;
    }
    const double inv = 1.0 / std::sqrt(sq / static_cast<double>(size) + eps);
    for (int64_t i = 0; i < size; ++i) {
      WriteFromDouble(y, r * size + i, affine(r, i, (ReadAsDouble(x, r * size + i) - mean) * inv));
    }
  }
}

Status InstanceNormalization(KernelContext& c) {
  const Tensor& x = c.in(0);
  if (x.rank() < 2) return c.Error("InstanceNormalization needs an input of rank >= 2");
  const auto scale = AsFloats(c.in(1)), bias = AsFloats(c.in(2));
  const int64_t C = x.shape()[1];
  if (static_cast<int64_t>(scale.size()) != C || static_cast<int64_t>(bias.size()) != C)
    return c.Error("InstanceNormalization scale and B must each have C = " + std::to_string(C) +
                   " elements; they have " + std::to_string(scale.size()) + " and " +
                   std::to_string(bias.size()));
  Tensor& y = c.Output(0, x.dtype(), x.shape());
  NormaliseRows(x, y, x.shape()[0] * C, Product(x.shape(), 2), c.op().Float("epsilon", 1e-5f),
                [&](int64_t r, int64_t, double v) { return v * scale[r % C] + bias[r % C]; });
  return Status::Ok();
}

Status LayerNormalization(KernelContext& c) {
  const Tensor& x = c.in(0);
  int64_t axis = c.op().Int("axis", -1);
  if (!NormaliseAxis(axis, x.rank())) return c.Error("axis out of range");
  const int64_t size = Product(x.shape(), axis), rows = Product(x.shape(), 0, axis);
  const Tensor& s = c.in(1);
  const auto sf = AsFloats(s);
  std::vector<float> bf;
  if (c.has_input(2)) bf = AsFloats(c.in(2));
  if (static_cast<int64_t>(sf.size()) != size)
    return c.Error("scale does not match the normalised shape");
  if (c.has_input(2) && static_cast<int64_t>(bf.size()) != size)
    return c.Error("bias does not match the normalised shape");
  Tensor& y = c.Output(0, x.dtype(), x.shape());
  const double eps = c.op().Float("epsilon", 1e-5f);
  if (x.dtype() == DataType::kFloat) {
    // Float rows: statistics accumulate in double (a row's mean and variance are long sums),
    // the per-element normalisation and affine run in float.
    const float* in = x.data<float>();
    float* out = y.mutable_data<float>();
#pragma omp parallel for if (rows * size >= (1 << 15)) schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = in + r * size;
      float* yr = out + r * size;
      double sum = 0, sq = 0;
      for (int64_t i = 0; i < size; ++i) sum += xr[i];
      const double mean = sum / static_cast<double>(size);
      for (int64_t i = 0; i < size; ++i) {
        const double d = xr[i] - mean;
        sq += d * d;
      }
      const float m = static_cast<float>(mean),
                  inv = static_cast<float>(1.0 / std::sqrt(sq / static_cast<double>(size) + eps));
      if (bf.empty()) {
        for (int64_t i = 0; i < size; ++i) yr[i] = (xr[i] - m) * inv * sf[i];
      } else {
        for (int64_t i = 0; i < size; ++i) yr[i] = (xr[i] - m) * inv * sf[i] + bf[i];
      }
    }
  } else {
    NormaliseRows(x, y, rows, size, eps, [&](int64_t, int64_t i, double v) {
      return v * sf[i] + (bf.empty() ? 0.0 : bf[i]);
    });
  }
  if (c.wants_output(1) || c.wants_output(2)) {
    std::vector<int64_t> stat_shape = x.shape();
    for (int64_t d = axis; d < x.rank(); ++d) stat_shape[d] = 1;
    Tensor* mean = c.wants_output(1) ? &c.Output(1, DataType::kFloat, stat_shape) : nullptr;
    Tensor* inv = c.wants_output(2) ? &c.Output(2, DataType::kFloat, stat_shape) : nullptr;
    for (int64_t r = 0; r < rows; ++r) {
      double m = 0, sq = 0;
      for (int64_t i = 0; i < size; ++i) m += ReadAsDouble(x, r * size + i);
      m /= static_cast<double>(size);
      for (int64_t i = 0; i < size; ++i) sq += std::pow(ReadAsDouble(x, r * size + i) - m, 2);
      if (mean) mean->mutable_data<float>()[r] = static_cast<float>(m);
      if (inv)
        inv->mutable_data<float>()[r] = static_cast<float>(
            1.0 / std::sqrt(sq / static_cast<double>(size) + c.op().Float("epsilon", 1e-5f)));
    }
  }
  return Status::Ok();
}

Status GroupNormalization(KernelContext& c) {
  const Tensor& x = c.in(0);
  if (x.rank() < 2) return c.Error("GroupNormalization needs an input of rank >= 2");
  const int64_t groups = c.op().Int("num_groups", 1), C = x.shape()[1], N = x.shape()[0];
  if (groups < 1 || C % groups != 0)
    return c.Error("GroupNormalization num_groups must divide the " + std::to_string(C) +
                   " channels, got " + std::to_string(groups));
  const int64_t inner = Product(x.shape(), 2);
  const auto scale = AsFloats(c.in(1)), bias = AsFloats(c.in(2));
  const bool per_channel =
      static_cast<int64_t>(scale.size()) == C;  // opset 21; opset 18 is per group
  const int64_t want = per_channel ? C : groups;
  if (static_cast<int64_t>(scale.size()) != want || static_cast<int64_t>(bias.size()) != want)
    return c.Error("GroupNormalization scale and bias must each have C = " + std::to_string(C) +
                   " or num_groups = " + std::to_string(groups) + " elements; they have " +
                   std::to_string(scale.size()) + " and " + std::to_string(bias.size()));
  Tensor& y = c.Output(0, x.dtype(), x.shape());
  const int64_t cpg = C / groups;
  NormaliseRows(x, y, N * groups, cpg * inner, c.op().Float("epsilon", 1e-5f),
                [&](int64_t r, int64_t i, double v) {
                  const int64_t g = r % groups, ch = g * cpg + i / inner;
                  return per_channel ? v * scale[ch] + bias[ch] : v * scale[g] + bias[g];
                });
  return Status::Ok();
}

enum class SoftKind { kSoftmax, kLogSoftmax, kHardmax };

Status Softmax(KernelContext& c, SoftKind kind) {
  const Tensor& x = c.in(0);
  const bool legacy = c.op().version < 13;  // before 13: coerce to 2-D at axis
  int64_t axis = c.op().Int("axis", legacy ? 1 : -1);
  if (!NormaliseAxis(axis, std::max<int64_t>(x.rank(), 1))) return c.Error("axis out of range");
  Tensor& y = c.Output(0, x.dtype(), x.shape());
  // No element, no row: an empty tensor's axis may still be 2^40 long (the row buffer below).
  if (x.elements() == 0) return Status::Ok();
  const int64_t outer = Product(x.shape(), 0, axis);
  // A scalar is one row of one element (its shape has no dimension to index).
  const int64_t dim = legacy ? Product(x.shape(), axis) : x.rank() == 0 ? 1 : x.shape()[axis];
  const int64_t inner = legacy ? 1 : Product(x.shape(), axis + 1);
  if (kind == SoftKind::kSoftmax && x.dtype() == DataType::kFloat && inner == 1 && dim > 0) {
    // Contiguous float rows: each exp once, in float (as the model's type), the sum in double
    // so long rows (a 6625-way vocabulary) add no rounding of their own.
    const float* in = x.data<float>();
    float* out = y.mutable_data<float>();
    for (int64_t o = 0; o < outer; ++o) {
      const float* xr = in + o * dim;
      float* yr = out + o * dim;
      const float peak = *std::max_element(xr, xr + dim);
      double sum = 0;
      for (int64_t k = 0; k < dim; ++k) {
        yr[k] = std::exp(xr[k] - peak);
        sum += yr[k];
      }
      const float scale = static_cast<float>(1.0 / sum);
      for (int64_t k = 0; k < dim; ++k) yr[k] *= scale;
    }
    return Status::Ok();
  }
  std::vector<double> row(static_cast<size_t>(dim));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      double peak = -INFINITY;
      int64_t arg = 0;
      for (int64_t k = 0; k < dim; ++k) {
        row[k] = ReadAsDouble(x, (o * dim + k) * inner + j);
        if (row[k] > peak) {
          peak = row[k];
          arg = k;
        }
      }
      double sum = 0;
      for (int64_t k = 0; k < dim; ++k) sum += std::exp(row[k] - peak);
      for (int64_t k = 0; k < dim; ++k) {
        double v;
        if (kind == SoftKind::kSoftmax)
          v = std::exp(row[k] - peak) / sum;
        else if (kind == SoftKind::kLogSoftmax)
          v = row[k] - peak - std::log(sum);
        else
          v = k == arg ? 1.0 : 0.0;
        WriteFromDouble(y, (o * dim + k) * inner + j, v);
      }
    }
  return Status::Ok();
}

Status Lrn(KernelContext& c) {
  const Tensor& x = c.in(0);
  if (x.rank() < 2) return c.Error("LRN needs an input of rank >= 2");
  if (c.op().Int("size", 1) < 1) return c.Error("LRN size must be at least 1");
  const int64_t size = c.op().Int("size", 1), C = x.shape()[1], inner = Product(x.shape(), 2);
  const double alpha = c.op().Float("alpha", 1e-4f), beta = c.op().Float("beta", 0.75f),
               bias = c.op().Float("bias", 1.f);
  Tensor& y = c.Output(0, x.dtype(), x.shape());
  for (int64_t n = 0; n < x.shape()[0]; ++n)
    for (int64_t ch = 0; ch < C; ++ch)
      for (int64_t i = 0; i < inner; ++i) {
        double sq = 0;
        const int64_t lo = std::max<int64_t>(0, ch - (size - 1) / 2),
                      hi = std::min<int64_t>(C - 1, ch + size / 2);
        for (int64_t k = lo; k <= hi; ++k)
          sq += std::pow(ReadAsDouble(x, (n * C + k) * inner + i), 2);
        const int64_t at = (n * C + ch) * inner + i;
        WriteFromDouble(
            y, at,
            ReadAsDouble(x, at) / std::pow(bias + alpha / static_cast<double>(size) * sq, beta));
      }
  return Status::Ok();
}

}  // namespace

// (x - x_zero) convolved with (w - w_zero), accumulated in 64 bits. w_zero is a scalar or one per
// output channel. Padding contributes nothing (it stands for x_zero).
Result<ConvGeometry> ResolveConvGeometry(const ExecOp& op, const std::vector<int64_t>& x_shape,
                                         const std::vector<int64_t>& w_shape) {
  if (x_shape.size() < 3 || x_shape.size() > 5 || w_shape.size() != x_shape.size())
    return InvalidArgument(op.op_type + " input and weights must have the same rank, 3 to 5");
  const std::vector<int64_t> spatial(x_shape.begin() + 2, x_shape.end());
  const std::vector<int64_t> kernel(w_shape.begin() + 2, w_shape.end());
  if (op.Ints("kernel_shape", kernel) != kernel)
    return InvalidArgument(op.op_type + " kernel_shape does not match the weights' spatial shape");
  auto w = MakeWindow(op, spatial, kernel);
  if (!w.ok()) return w.status();
  ConvGeometry g{x_shape[0], x_shape[1],   w_shape[0],    op.Int("group", 1), spatial, kernel,
                 w->strides, w->dilations, w->pads_begin, w->pads_end,        w->out};
  if (g.group <= 0 || g.group > std::max<int64_t>(g.in_channels, 1) ||
      g.in_channels % g.group != 0 || g.out_channels % g.group != 0 ||
      w_shape[1] != g.in_channels / g.group)
    return InvalidArgument(op.op_type + " channels do not match the weights and groups");
  return g;
}

Result<IntegerConvOutput> IntegerConv(KernelContext& c, const Tensor& x, const Tensor* x_zero,
                                      const Tensor& wt, const Tensor* w_zero) {
  const std::string& op = c.op().op_type;
  if (x.rank() < 3 || wt.rank() != x.rank())
    return c.Error(op + " input and weights must have the same rank, at least 3");
  // 8-bit operands and zero points of their types, as the specification says: the integer
  // arithmetic below then cannot overflow, and no zero point converts from NaN or past int64.
  auto eight_bit = [](DataType t) { return t == DataType::kUint8 || t == DataType::kInt8; };
  if (!eight_bit(x.dtype()) || !eight_bit(wt.dtype()))
    return c.Error(op + " input and weights must be uint8 or int8 tensors");
  if ((x_zero && x_zero->elements() > 0 && x_zero->dtype() != x.dtype()) ||
      (w_zero && w_zero->elements() > 0 && w_zero->dtype() != wt.dtype()))
    return c.Error(op + " zero points must have the input's and the weights' types");
  const int64_t N = x.shape()[0], C = x.shape()[1], M = wt.shape()[0];
  const int64_t group = c.op().Int("group", 1);
  const std::vector<int64_t> spatial(x.shape().begin() + 2, x.shape().end());
  const std::vector<int64_t> kernel(wt.shape().begin() + 2, wt.shape().end());
  if (c.op().Ints("kernel_shape", kernel) != kernel)
    return c.Error(op + " kernel_shape does not match the weights' spatial shape");
  auto w = MakeWindow(c.op(), spatial, kernel);
  if (!w.ok()) return w.status();
  if (group <= 0 || group > std::max<int64_t>(C, 1) || C % group != 0 || M % group != 0 ||
      wt.shape()[1] != C / group)
    return c.Error(op + " channels do not match the weights and groups");
  auto zero_point = [&](const Tensor* z, bool per_channel_ok, int64_t channel) -> Result<int64_t> {
    if (!z || z->elements() == 0) return int64_t{0};
    if (z->elements() == 1) return static_cast<int64_t>(ReadAsDouble(*z, 0));
    if (!per_channel_ok || z->elements() != M)
      return c.Error(op + " zero point must be a scalar (or one per output channel for w)");
    return static_cast<int64_t>(ReadAsDouble(*z, channel));
  };
  auto xz = zero_point(x_zero, false, 0);
  if (!xz.ok()) return xz.status();
  std::vector<int64_t> xs(static_cast<size_t>(x.elements())),
      ws(static_cast<size_t>(wt.elements()));
  for (int64_t i = 0; i < x.elements(); ++i) xs[i] = static_cast<int64_t>(ReadAsDouble(x, i)) - *xz;
  const int64_t per_m = wt.elements() / std::max<int64_t>(M, 1);
  for (int64_t m = 0; m < M; ++m) {
    auto wz = zero_point(w_zero, true, m);
    if (!wz.ok()) return wz.status();
    for (int64_t i = m * per_m; i < (m + 1) * per_m; ++i)
      ws[i] = static_cast<int64_t>(ReadAsDouble(wt, i)) - *wz;
  }
  IntegerConvOutput result;
  result.shape = {N, M};
  result.shape.insert(result.shape.end(), w->out.begin(), w->out.end());
  // The accumulators are a scratch copy of the output: bounded as the output will be, first.
  if (!ShapeWithinLimit(result.shape))
    return c.Error(op + " output would have more than 2^40 elements");
  c.CheckSize(0, DataType::kInt64, result.shape);
  result.acc.assign(static_cast<size_t>(Product(result.shape)), 0);
  const int64_t cg = C / group, mg = M / group, ksize = Product(kernel), osize = Product(w->out),
                isize = Product(spatial);
  const auto out_strides = Strides(w->out), k_strides = Strides(kernel),
             in_strides = Strides(spatial);
  const size_t nsp = spatial.size();
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t m = 0; m < M; ++m) {
      const int64_t g = m / mg;
      for (int64_t o = 0; o < osize; ++o) {
        int64_t acc = 0;
        for (int64_t k = 0; k < ksize; ++k) {
          int64_t in_offset = 0;
          bool inside = true;
          for (size_t d = 0; d < nsp && inside; ++d) {
            const int64_t od = (o / out_strides[d]) % w->out[d];
            const int64_t kd = (k / k_strides[d]) % kernel[d];
            const int64_t id = od * w->strides[d] - w->pads_begin[d] + kd * w->dilations[d];
            inside = id >= 0 && id < spatial[d];
            in_offset += id * in_strides[d];
          }
          if (!inside) continue;
          for (int64_t ci = 0; ci < cg; ++ci) {
            const int64_t xc = g * cg + ci;
            acc += xs[(n * C + xc) * isize + in_offset] * ws[(m * cg + ci) * ksize + k];
          }
        }
        result.acc[(n * M + m) * osize + o] = acc;
      }
    }
  }
  return result;
}

namespace {

// ConvInteger: the shared integer convolution, stored as int32 (the accumulator wraps as a cast
// to int32 would, like the reference's int32 arithmetic).
Status ConvInteger(KernelContext& c) {
  auto conv = IntegerConv(c, c.in(0), c.input(2), c.in(1), c.input(3));
  if (!conv.ok()) return conv.status();
  Tensor& y = c.OutputUninit(0, DataType::kInt32, conv->shape);
  int32_t* out = y.mutable_data<int32_t>();
  for (size_t i = 0; i < conv->acc.size(); ++i) out[i] = static_cast<int32_t>(conv->acc[i]);
  return Status::Ok();
}

}  // namespace

Status ResizeKernel(KernelContext& c);

void RegisterNnKernels(KernelTable& t) {
  t["MatMul"] = MatMul;
  t["Gemm"] = Gemm;
  t["Conv"] = Conv;
  t["FusedConv"] = Conv;
  t["ConvTranspose"] = ConvTranspose;
  t["ConvInteger"] = ConvInteger;
  t["MaxPool"] = [](KernelContext& c) { return Pool(c, PoolKind::kMax); };
  t["AveragePool"] = [](KernelContext& c) { return Pool(c, PoolKind::kAverage); };
  t["LpPool"] = [](KernelContext& c) { return Pool(c, PoolKind::kLp); };
  t["GlobalAveragePool"] = [](KernelContext& c) { return GlobalPool(c, false); };
  t["GlobalMaxPool"] = [](KernelContext& c) { return GlobalPool(c, true); };
  t["BatchNormalization"] = BatchNormalization;
  t["InstanceNormalization"] = InstanceNormalization;
  t["LayerNormalization"] = LayerNormalization;
  t["GroupNormalization"] = GroupNormalization;
  t["Softmax"] = [](KernelContext& c) { return Softmax(c, SoftKind::kSoftmax); };
  t["LogSoftmax"] = [](KernelContext& c) { return Softmax(c, SoftKind::kLogSoftmax); };
  t["Hardmax"] = [](KernelContext& c) { return Softmax(c, SoftKind::kHardmax); };
  t["LRN"] = Lrn;
  t["Resize"] = ResizeKernel;
  t["Upsample"] = ResizeKernel;
}

}  // namespace ortc::exec
