// BatchNormalization (inference), InstanceNormalization, LayerNormalization,
// GroupNormalization and LRN.
#include <algorithm>
#include <cmath>
#include <functional>

#include "cpu/runtime/kernels/float_gemm.h"
#include "cpu/runtime/kernels/kernel_util.h"
#include "cpu/runtime/kernels/registry.h"

namespace ortc::exec {
namespace {

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
        for (int64_t i = 0; i < inner; ++i) m += ElementAsDouble(x, (n * C + ch) * inner + i);
      m /= static_cast<double>(N * inner);
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < inner; ++i)
          sq += std::pow(ElementAsDouble(x, (n * C + ch) * inner + i) - m, 2);
      const double v = sq / static_cast<double>(N * inner);
      if (run_mean) SetElementFromDouble(*run_mean, ch, mean[ch] * momentum + m * (1 - momentum));
      if (run_var) SetElementFromDouble(*run_var, ch, var[ch] * momentum + v * (1 - momentum));
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
        SetElementFromDouble(y, at, (ElementAsDouble(x, at) - mean[ch]) * k + bias[ch]);
      }
    }
  return Status::Ok();
}

// Normalises groups of `size` consecutive elements, then applies per-position scale/bias.
void NormaliseRows(const Tensor& x, Tensor& y, int64_t rows, int64_t size, double eps,
                   const std::function<double(int64_t row, int64_t i, double v)>& affine) {
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, sq = 0;
    for (int64_t i = 0; i < size; ++i) mean += ElementAsDouble(x, r * size + i);
    mean /= static_cast<double>(size);
    for (int64_t i = 0; i < size; ++i) {
      const double d = ElementAsDouble(x, r * size + i) - mean;
      sq += d * d;
    }
    const double inv = 1.0 / std::sqrt(sq / static_cast<double>(size) + eps);
    for (int64_t i = 0; i < size; ++i) {
      SetElementFromDouble(y, r * size + i,
                           affine(r, i, (ElementAsDouble(x, r * size + i) - mean) * inv));
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

// A float row's sum of squared deviations from `mean`, in double: eight partial sums (as
// RowSum, kernel_util.h).
double RowSquaredDeviation(const float* x, int64_t n, double mean) {
  double part[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) {
      const double d = x[i + k] - mean;
      part[k] += d * d;
    }
  double sum = 0;
  for (; i < n; ++i) sum += (x[i] - mean) * (x[i] - mean);
  for (double p : part) sum += p;
  return sum;
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
      const double mean = RowSum(xr, size) / static_cast<double>(size);
      const double sq = RowSquaredDeviation(xr, size, mean);
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
      for (int64_t i = 0; i < size; ++i) m += ElementAsDouble(x, r * size + i);
      m /= static_cast<double>(size);
      for (int64_t i = 0; i < size; ++i) sq += std::pow(ElementAsDouble(x, r * size + i) - m, 2);
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
          sq += std::pow(ElementAsDouble(x, (n * C + k) * inner + i), 2);
        const int64_t at = (n * C + ch) * inner + i;
        SetElementFromDouble(
            y, at,
            ElementAsDouble(x, at) / std::pow(bias + alpha / static_cast<double>(size) * sq, beta));
      }
  return Status::Ok();
}

}  // namespace

void RegisterNormalizationKernels(KernelTable& t) {
  t["BatchNormalization"] = BatchNormalization;
  t["InstanceNormalization"] = InstanceNormalization;
  t["LayerNormalization"] = LayerNormalization;
  t["GroupNormalization"] = GroupNormalization;
  t["LRN"] = Lrn;
}

}  // namespace ortc::exec
