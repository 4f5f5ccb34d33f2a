// Conv (and the compiler's FusedConv) and ConvTranspose in float32: oneDNN where it takes the
// shape, else im2col + GEMM, a direct depthwise loop, and col2im for the transpose; ConvInteger
// over the shared integer convolution.
#include <algorithm>
#include <cmath>

#include "cpu/runtime/kernels/float_gemm.h"
#include "cpu/runtime/kernels/fused_activation.h"
#include "cpu/runtime/kernels/integer_conv.h"
#include "cpu/runtime/kernels/kernel_util.h"
#include "cpu/runtime/kernels/onednn_conv.h"
#include "cpu/runtime/kernels/registry.h"
#include "cpu/runtime/kernels/spatial_window.h"

namespace ortc::exec {
namespace {

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
  if (static_cast<int64_t>(w_shape.size()) != x.rank())
    return c.Error("Conv weights must have the input's rank");
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

void RegisterConvKernels(KernelTable& t) {
  t["Conv"] = Conv;
  t["FusedConv"] = Conv;
  t["ConvTranspose"] = ConvTranspose;
  t["ConvInteger"] = ConvInteger;
}

}  // namespace ortc::exec
