// The integer convolution behind ConvInteger and QLinearConv (integer_conv.h).
#include "cpu/runtime/kernels/integer_conv.h"

#include <algorithm>

#include "cpu/runtime/kernels/kernel_util.h"
#include "cpu/runtime/kernels/onednn_conv.h"
#include "cpu/runtime/kernels/spatial_window.h"

namespace ortc::exec {

// (x - x_zero) convolved with (w - w_zero), accumulated in 64 bits. w_zero is a scalar or one per
// output channel. Padding contributes nothing (it stands for x_zero).
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
    if (z->elements() == 1) return static_cast<int64_t>(ElementAsDouble(*z, 0));
    if (!per_channel_ok || z->elements() != M)
      return c.Error(op + " zero point must be a scalar (or one per output channel for w)");
    return static_cast<int64_t>(ElementAsDouble(*z, channel));
  };
  auto xz = zero_point(x_zero, false, 0);
  if (!xz.ok()) return xz.status();
  std::vector<int64_t> xs(static_cast<size_t>(x.elements())),
      ws(static_cast<size_t>(wt.elements()));
  for (int64_t i = 0; i < x.elements(); ++i)
    xs[i] = static_cast<int64_t>(ElementAsDouble(x, i)) - *xz;
  const int64_t per_m = wt.elements() / std::max<int64_t>(M, 1);
  for (int64_t m = 0; m < M; ++m) {
    auto wz = zero_point(w_zero, true, m);
    if (!wz.ok()) return wz.status();
    for (int64_t i = m * per_m; i < (m + 1) * per_m; ++i)
      ws[i] = static_cast<int64_t>(ElementAsDouble(wt, i)) - *wz;
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

}  // namespace ortc::exec
