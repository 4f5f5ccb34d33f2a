// Quantization kernels: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger,
// QLinearMatMul. Rounding is half to even, as the ONNX specification requires.
#include <algorithm>
#include <cmath>
#include <functional>

#include "cpu/runtime/kernels/kernel_util.h"
#include "cpu/runtime/kernels/registry.h"

namespace ortc::exec {
namespace {

double Saturate(double v, DataType t) {
  switch (t) {
    case DataType::kUint8:
      return std::clamp(v, 0.0, 255.0);
    case DataType::kInt8:
      return std::clamp(v, -128.0, 127.0);
    case DataType::kUint16:
      return std::clamp(v, 0.0, 65535.0);
    case DataType::kInt16:
      return std::clamp(v, -32768.0, 32767.0);
    case DataType::kInt32:
      return std::clamp(v, -2147483648.0, 2147483647.0);
    default:
      return v;
  }
}

// Index into a per-tensor (1 element) or per-axis parameter.
int64_t ParamIndex(const Tensor& x, const Tensor& p, int64_t axis, int64_t i) {
  if (p.elements() <= 1) return 0;
  const int64_t inner = Product(x.shape(), axis + 1);
  return (i / inner) % x.shape()[axis];
}

// The scale has one element, or one per index of x's axis; the zero point, when given, as many
// elements as the scale and an integer type (ParamIndex reads both at the same index).
Status CheckQuantParams(KernelContext& c, const Tensor& x, const Tensor& scale, const Tensor* zp,
                        int64_t& axis) {
  if (scale.elements() > 1 && !NormaliseAxis(axis, x.rank())) return c.Error("axis out of range");
  if (scale.elements() != 1 && (scale.elements() == 0 || scale.elements() != x.shape()[axis]))
    return c.Error("the scale must have one element or one per index of the axis");
  if (zp && (zp->elements() != scale.elements() || !IsIntegerType(zp->dtype())))
    return c.Error("the zero point must be an integer tensor with the scale's element count");
  return Status::Ok();
}

Status QuantizeLinear(KernelContext& c) {
  const Tensor& x = c.in(0);
  const Tensor& scale = c.in(1);
  const Tensor* zp = c.input(2);
  int64_t axis = c.op().Int("axis", 1);
  ORTC_RETURN_IF_ERROR(CheckQuantParams(c, x, scale, zp, axis));
  DataType out = zp ? zp->dtype() : DataType::kUint8;
  if (c.op().Int("output_dtype", 0) != 0)
    out = static_cast<DataType>(c.op().Int("output_dtype", 0));
  if (!IsIntegerType(out)) return c.Error("the output type must be an integer type");
  Tensor& y = c.Output(0, out, x.shape());
  if (x.dtype() == DataType::kFloat && scale.dtype() == DataType::kFloat && scale.elements() == 1 &&
      (out == DataType::kUint8 || out == DataType::kInt8)) {
    // Per tensor, float to 8 bits: the same float32 arithmetic in a loop that vectorises.
    const float s = scale.data<float>()[0],
                zero = zp ? static_cast<float>(ElementAsDouble(*zp, 0)) : 0;
    const float lo = out == DataType::kUint8 ? 0.f : -128.f,
                hi = out == DataType::kUint8 ? 255.f : 127.f;
    const float* in = x.data<float>();
    const int64_t n = x.elements();
    // A NaN quotient (a NaN input, or 0 / 0 where a dynamic scale came out 0) quantizes to the
    // zero point: converting NaN to an integer is undefined behaviour.
    auto step = [s](float v) {
      const float r = std::nearbyint(v / s);
      return r == r ? r : 0.f;
    };
    if (out == DataType::kUint8) {
      uint8_t* q = y.mutable_data<uint8_t>();
      for (int64_t i = 0; i < n; ++i)
        q[i] = static_cast<uint8_t>(std::clamp(step(in[i]) + zero, lo, hi));
    } else {
      int8_t* q = y.mutable_data<int8_t>();
      for (int64_t i = 0; i < n; ++i)
        q[i] = static_cast<int8_t>(std::clamp(step(in[i]) + zero, lo, hi));
    }
    return Status::Ok();
  }
  for (int64_t i = 0; i < x.elements(); ++i) {
    const int64_t k = ParamIndex(x, scale, axis, i);
    const double zero = zp ? ElementAsDouble(*zp, k) : 0.0;
    // float32 arithmetic, as the specification's reference computes it
    const float q =
        static_cast<float>(ElementAsDouble(x, i)) / static_cast<float>(ElementAsDouble(scale, k));
    const double r = std::isnan(q) ? 0.0 : std::nearbyint(q);  // NaN: the zero point, as above
    SetElementFromDouble(y, i, Saturate(r + zero, out));
  }
  return Status::Ok();
}

Status DequantizeLinear(KernelContext& c) {
  const Tensor& x = c.in(0);
  const Tensor& scale = c.in(1);
  const Tensor* zp = c.input(2);
  int64_t axis = c.op().Int("axis", 1);
  ORTC_RETURN_IF_ERROR(CheckQuantParams(c, x, scale, zp, axis));
  if (zp && zp->dtype() != x.dtype()) return c.Error("the zero point must have x's type");
  if (!IsFloatType(scale.dtype())) return c.Error("the scale must be a float type");
  // Opset 23's output_dtype names the output type (and so the product's precision).
  const int64_t output_dtype = c.op().Int("output_dtype", 0);
  const DataType out = output_dtype != 0 ? static_cast<DataType>(output_dtype) : scale.dtype();
  if (!IsFloatType(out)) return c.Error("output_dtype must be a float type");
  Tensor& y = c.Output(0, out, x.shape());
  if ((x.dtype() == DataType::kUint8 || x.dtype() == DataType::kInt8) &&
      scale.dtype() == DataType::kFloat && out == DataType::kFloat && scale.elements() == 1) {
    // Per tensor, 8 bits to float: (x - zero) is exact in float and the float product is the
    // double product correctly rounded, so this equals the general path below.
    const float s = scale.data<float>()[0];
    const int32_t zero = zp ? static_cast<int32_t>(ElementAsDouble(*zp, 0)) : 0;
    float* out = y.mutable_data<float>();
    const int64_t n = x.elements();
    if (x.dtype() == DataType::kUint8) {
      const uint8_t* in = x.data<uint8_t>();
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(in[i] - zero) * s;
    } else {
      const int8_t* in = x.data<int8_t>();
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(in[i] - zero) * s;
    }
    return Status::Ok();
  }
  for (int64_t i = 0; i < x.elements(); ++i) {
    const int64_t k = ParamIndex(x, scale, axis, i);
    const double zero = zp ? ElementAsDouble(*zp, k) : 0.0;
    SetElementFromDouble(y, i, (ElementAsDouble(x, i) - zero) * ElementAsDouble(scale, k));
  }
  return Status::Ok();
}

Status DynamicQuantizeLinear(KernelContext& c) {
  const Tensor& x = c.in(0);
  double lo = 0, hi = 0;
  for (int64_t i = 0; i < x.elements(); ++i) {
    lo = std::min(lo, ElementAsDouble(x, i));
    hi = std::max(hi, ElementAsDouble(x, i));
  }
  const float scale = (static_cast<float>(hi) - static_cast<float>(lo)) / 255.0f;
  double zp =
      scale == 0 ? 0 : Saturate(std::nearbyint(static_cast<float>(-lo) / scale), DataType::kUint8);
  if (std::isnan(zp)) zp = 0;  // an infinite input makes -lo / scale inf / inf
  Tensor& y = c.Output(0, DataType::kUint8, x.shape());
  for (int64_t i = 0; i < x.elements(); ++i) {
    const float q = static_cast<float>(ElementAsDouble(x, i)) / scale;
    SetElementFromDouble(y, i,
                         scale == 0 ? zp : Saturate(std::nearbyint(q) + zp, DataType::kUint8));
  }
  c.Output(1, DataType::kFloat, {}).mutable_data<float>()[0] = scale;
  c.Output(2, DataType::kUint8, {}).mutable_data<uint8_t>()[0] = static_cast<uint8_t>(zp);
  return Status::Ok();
}

// Integer matrix product of 2-D (or batched with equal batch) operands after zero points.
Status IntegerMatMul(KernelContext& c, const Tensor& a, const Tensor& b, const Tensor* azp,
                     const Tensor* bzp, const std::function<void(Tensor&, int64_t, double)>& store,
                     DataType out_type) {
  if (a.rank() < 2 || b.rank() < 2) return c.Error("operands must be at least 2-D");
  const int64_t m = a.shape()[a.rank() - 2], k = a.shape().back(), n = b.shape().back();
  const int64_t batch = Product(a.shape(), 0, a.shape().size() - 2);
  const int64_t b_batch = Product(b.shape(), 0, b.shape().size() - 2);
  // What the loop below reads: b's rows, its batches, and one zero point or one per row / col.
  if (b.shape()[b.rank() - 2] != k || (b_batch != 1 && b_batch != batch))
    return c.Error("operands' inner dimensions or batches differ");
  if ((azp && azp->elements() != 1 && azp->elements() != m) ||
      (bzp && bzp->elements() != 1 && bzp->elements() != n))
    return c.Error("zero points must have one element, or one per row of a / column of b");
  std::vector<int64_t> shape(a.shape().begin(), a.shape().end() - 1);
  shape.push_back(n);
  Tensor& y = c.Output(0, out_type, shape);
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t col = 0; col < n; ++col) {
        double acc = 0;
        for (int64_t j = 0; j < k; ++j) {
          const double av = ElementAsDouble(a, (bi * m + r) * k + j) -
                            (azp ? ElementAsDouble(*azp, azp->elements() > 1 ? r : 0) : 0);
          const double bv = ElementAsDouble(b, ((b_batch > 1 ? bi : 0) * k + j) * n + col) -
                            (bzp ? ElementAsDouble(*bzp, bzp->elements() > 1 ? col : 0) : 0);
          acc += av * bv;
        }
        store(y, (bi * m + r) * n + col, acc);
      }
  return Status::Ok();
}

Status MatMulInteger(KernelContext& c) {
  return IntegerMatMul(
      c, c.in(0), c.in(1), c.input(2), c.input(3),
      [](Tensor& y, int64_t i, double v) { SetElementFromDouble(y, i, v); }, DataType::kInt32);
}

Status QLinearMatMul(KernelContext& c) {
  // a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp
  for (int k : {1, 4, 6, 7}) {
    if (c.in(k).elements() < 1) return c.Error("scales and zero points must not be empty");
  }
  if (!IsIntegerType(c.in(7).dtype())) return c.Error("y_zero_point must be an integer tensor");
  const double sa = ElementAsDouble(c.in(1), 0), sb = ElementAsDouble(c.in(4), 0),
               sy = ElementAsDouble(c.in(6), 0);
  const Tensor& yzp = c.in(7);
  const double zy = ElementAsDouble(yzp, 0);
  return IntegerMatMul(
      c, c.in(0), c.in(3), c.input(2), c.input(5),
      [&](Tensor& y, int64_t i, double v) {
        SetElementFromDouble(y, i, Saturate(std::nearbyint(v * sa * sb / sy) + zy, yzp.dtype()));
      },
      yzp.dtype());
}

}  // namespace

void RegisterQuantizationKernels(KernelTable& t) {
  t["QuantizeLinear"] = QuantizeLinear;
  t["DequantizeLinear"] = DequantizeLinear;
  t["DynamicQuantizeLinear"] = DynamicQuantizeLinear;
  t["MatMulInteger"] = MatMulInteger;
  t["QLinearMatMul"] = QLinearMatMul;
}

}  // namespace ortc::exec
