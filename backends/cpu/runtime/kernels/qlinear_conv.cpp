// QLinearConv (opset 10): a convolution of quantized uint8/int8 tensors with a quantized output.
// The integer part is the convolution ConvInteger runs (integer_conv.h); the int32 bias is added
// to the accumulator (it is quantized with scale x_scale * w_scale and zero point 0), and the sum
// is requantized to y's type:
//   y = saturate(round_half_even(acc * (x_scale * w_scale[m] / y_scale)) + y_zero_point).
// The requantization is done in float32, the precision ONNX Runtime uses, so results agree with
// it on halfway cases.
#include <algorithm>
#include <cmath>
#include <string>

#include "cpu/runtime/kernels/integer_conv.h"
#include "cpu/runtime/kernels/kernel_util.h"
#include "cpu/runtime/kernels/onednn_conv.h"
#include "cpu/runtime/kernels/registry.h"

namespace ortc::exec {
namespace {

bool IsQuantizedType(DataType t) {
  return t == DataType::kUint8 || t == DataType::kInt8;
}

// oneDNN's int8 convolution, when it can take the case: int8 weights with zero point 0 (the
// symmetric quantization exporters write), scalar x zero point, NCHW of rank 3 to 5. Returns
// whether it ran.
Result<bool> TryOneDnn(KernelContext& c, DataType out_type, const Tensor* bias) {
  auto* cache = dynamic_cast<OneDnnConvCache*>(c.op().cache.get());
  const Tensor& x = c.in(0);
  const Tensor& w = c.in(3);
  if (!cache || w.dtype() != DataType::kInt8 || x.rank() < 3 || x.rank() > 5) return false;
  if (c.has_input(5)) {
    const Tensor& wz = c.in(5);
    for (int64_t i = 0; i < wz.elements(); ++i)
      if (ElementAsDouble(wz, i) != 0) return false;
  }
  const Tensor* xz = c.has_input(2) && c.in(2).elements() > 0 ? c.input(2) : nullptr;
  if (xz && xz->elements() != 1) return false;
  auto g = ResolveConvGeometry(c.op(), x.shape(), w.shape());
  if (!g.ok()) return g.status();
  QuantizedConvParams q;
  q.x_signed = x.dtype() == DataType::kInt8;
  q.y_signed = out_type == DataType::kInt8;
  q.x_zero = xz ? static_cast<int32_t>(ElementAsDouble(*xz, 0)) : 0;
  const Tensor* yz = c.has_input(7) && c.in(7).elements() > 0 ? c.input(7) : nullptr;
  q.y_zero = yz ? static_cast<int32_t>(ElementAsDouble(*yz, 0)) : 0;
  // The scale each accumulator is multiplied by, in float32 as the loops below compute it.
  const float x_scale = static_cast<float>(ElementAsDouble(c.in(1), 0));
  const float y_scale = static_cast<float>(ElementAsDouble(c.in(6), 0));
  const Tensor& w_scale = c.in(4);
  for (int64_t m = 0; m < w_scale.elements(); ++m)
    q.scales.push_back(x_scale * static_cast<float>(ElementAsDouble(w_scale, m)) / y_scale);
  std::vector<int64_t> out_shape = {g->batch, g->out_channels};
  out_shape.insert(out_shape.end(), g->out.begin(), g->out.end());
  Tensor& y = c.OutputUninit(0, out_type, out_shape);
  bool handled = false;
  Status st =
      OneDnnQuantizedConv(c.op(), cache, *g, q, x.raw(), w.data<int8_t>(),
                          bias ? bias->data<int32_t>() : nullptr, y.mutable_raw(), &handled);
  if (!st.ok()) return st;
  return handled;
}

Status QLinearConv(KernelContext& c) {
  // x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B
  const Tensor& x = c.in(0);
  const Tensor& w = c.in(3);
  if (!IsQuantizedType(x.dtype()) || !IsQuantizedType(w.dtype()))
    return c.Error("QLinearConv x and w must be uint8 or int8");
  if (x.rank() < 3 || w.rank() != x.rank())
    return c.Error("QLinearConv x and w must have the same rank, at least 3");
  const int64_t M = w.shape()[0];
  auto is_scale = [&](size_t i, bool per_channel_ok) {
    return c.has_input(i) && IsFloatType(c.in(i).dtype()) &&
           (c.in(i).elements() == 1 || (per_channel_ok && c.in(i).elements() == M));
  };
  if (!is_scale(1, false) || !is_scale(6, false))
    return c.Error("QLinearConv x_scale and y_scale must be float scalars");
  if (!is_scale(4, true))
    return c.Error(
        "QLinearConv w_scale must be a float scalar or have one value per output "
        "channel (" +
        std::to_string(M) + ")");
  const Tensor* y_zero = c.has_input(7) && c.in(7).elements() > 0 ? c.input(7) : nullptr;
  if (y_zero && y_zero->elements() != 1)
    return c.Error("QLinearConv y_zero_point must be a scalar");
  const DataType out_type = y_zero ? y_zero->dtype() : x.dtype();
  if (!IsQuantizedType(out_type)) return c.Error("QLinearConv y_zero_point must be uint8 or int8");
  // Zero points are read as x's and w's types (a float NaN or an int64 2^40 converted to int32
  // was undefined).
  for (auto [i, type] : {std::pair{2, x.dtype()}, std::pair{5, w.dtype()}}) {
    if (c.has_input(i) && c.in(i).elements() > 0 && c.in(i).dtype() != type)
      return c.Error("QLinearConv x_zero_point and w_zero_point must have x's and w's types");
  }
  const Tensor* bias = c.has_input(8) && c.in(8).elements() > 0 ? c.input(8) : nullptr;
  if (bias && (bias->dtype() != DataType::kInt32 || bias->rank() != 1 || bias->elements() != M))
    return c.Error("QLinearConv B must be a 1-D int32 tensor with one value per output channel (" +
                   std::to_string(M) + ")");

  auto fast = TryOneDnn(c, out_type, bias);
  if (!fast.ok()) return fast.status();
  if (*fast) return Status::Ok();
  auto conv = IntegerConv(c, x, c.input(2), w, c.input(5));
  if (!conv.ok()) return conv.status();

  const float x_scale = static_cast<float>(ElementAsDouble(c.in(1), 0));
  const float y_scale = static_cast<float>(ElementAsDouble(c.in(6), 0));
  const Tensor& w_scale = c.in(4);
  const float zero = y_zero ? static_cast<float>(ElementAsDouble(*y_zero, 0)) : 0.f;
  const float lo = out_type == DataType::kUint8 ? 0.f : -128.f;
  const float hi = out_type == DataType::kUint8 ? 255.f : 127.f;
  Tensor& y = c.OutputUninit(0, out_type, conv->shape);
  const int64_t per_m = Product(conv->shape, 2), N = conv->shape[0];
  for (int64_t m = 0; m < M; ++m) {
    const float ws = static_cast<float>(ElementAsDouble(w_scale, w_scale.elements() == 1 ? 0 : m));
    const float scale = x_scale * ws / y_scale;
    const int64_t b = bias ? bias->data<int32_t>()[m] : 0;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t i = 0; i < per_m; ++i) {
        const int64_t at = (n * M + m) * per_m + i;
        const float q = std::nearbyint(static_cast<float>(conv->acc[at] + b) * scale) + zero;
        SetElementFromDouble(y, at, std::clamp(q, lo, hi));
      }
  }
  return Status::Ok();
}

}  // namespace

void RegisterQLinearConvKernels(KernelTable& t) {
  t["QLinearConv"] = QLinearConv;
}

}  // namespace ortc::exec
