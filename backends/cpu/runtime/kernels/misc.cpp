// Remaining small kernels: Shrink, window functions, Det, MeanVarianceNormalization.
#include <algorithm>
#include <cmath>

#include "cpu/runtime/kernels/kernel_util.h"
#include "cpu/runtime/kernels/registry.h"

namespace ortc::exec {
namespace {

Status Shrink(KernelContext& c) {
  const Tensor& x = c.in(0);
  const double lambd = c.op().Float("lambd", 0.5f), bias = c.op().Float("bias", 0.f);
  Tensor& y = c.Output(0, x.dtype(), x.shape());
  for (int64_t i = 0; i < x.elements(); ++i) {
    const double v = ElementAsDouble(x, i);
    SetElementFromDouble(y, i, v < -lambd ? v + bias : v > lambd ? v - bias : 0.0);
  }
  return Status::Ok();
}

// Generalised cosine windows: a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N).
Status Window(KernelContext& c, double a0, double a1, double a2) {
  if (c.in(0).elements() != 1 || !IsIntegerType(c.in(0).dtype()))
    return c.Error(c.op().op_type + " size must be an integer scalar");
  // Read as an integer: INT64_MAX through double is 2^63, which converts back undefined.
  const auto size = static_cast<int64_t>(ReadBits(c.in(0), 0));
  if (size < 0) return c.Error(c.op().op_type + " size must not be negative");
  const bool periodic = c.op().Int("periodic", 1) != 0;
  const auto dtype = static_cast<DataType>(c.op().Int("output_datatype", 1));
  if (ElementSize(dtype) == 0)
    return c.Error(c.op().op_type + " output_datatype must be a numeric type");
  Tensor& y = c.Output(0, dtype, {size});
  const double n = static_cast<double>(periodic ? size : size - 1);
  for (int64_t i = 0; i < size; ++i) {
    const double x = static_cast<double>(i);
    SetElementFromDouble(y, i,
                         a0 - a1 * std::cos(2 * M_PI * x / n) + a2 * std::cos(4 * M_PI * x / n));
  }
  return Status::Ok();
}

Status Det(KernelContext& c) {
  const Tensor& x = c.in(0);
  if (x.rank() < 2 || x.shape()[x.rank() - 2] != x.shape().back())
    return c.Error("Det needs square matrices: an input of shape [..., n, n]");
  const int64_t n = x.shape().back();
  const int64_t batch = x.elements() / std::max<int64_t>(n * n, 1);
  std::vector<int64_t> shape(x.shape().begin(), x.shape().end() - 2);
  Tensor& y = c.Output(0, x.dtype(), shape);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<double> m(static_cast<size_t>(n * n));
    for (int64_t i = 0; i < n * n; ++i) m[i] = ElementAsDouble(x, b * n * n + i);
    double det = 1;
    for (int64_t col = 0; col < n; ++col) {  // Gaussian elimination with partial pivoting
      int64_t pivot = col;
      for (int64_t r = col + 1; r < n; ++r) {
        if (std::fabs(m[r * n + col]) > std::fabs(m[pivot * n + col])) pivot = r;
      }
      if (m[pivot * n + col] == 0) {
        det = 0;
        break;
      }
      if (pivot != col) {
        for (int64_t k = 0; k < n; ++k) std::swap(m[pivot * n + k], m[col * n + k]);
        det = -det;
      }
      det *= m[col * n + col];
      for (int64_t r = col + 1; r < n; ++r) {
        const double f = m[r * n + col] / m[col * n + col];
        for (int64_t k = col; k < n; ++k) m[r * n + k] -= f * m[col * n + k];
      }
    }
    SetElementFromDouble(y, b, det);
  }
  return Status::Ok();
}

Status MeanVarianceNormalization(KernelContext& c) {
  const Tensor& x = c.in(0);
  std::vector<int64_t> axes = c.op().Ints("axes", {0, 2, 3});
  std::vector<bool> reduced(x.rank(), false);
  for (int64_t a : axes) {
    if (!NormaliseAxis(a, x.rank())) return c.Error("axis out of range");
    reduced[a] = true;
  }
  std::vector<int64_t> stat_shape;
  for (int64_t d = 0; d < x.rank(); ++d) stat_shape.push_back(reduced[d] ? 1 : x.shape()[d]);
  // No element, nothing to normalise: the statistics' shape alone may be 2^40 entries.
  if (x.elements() == 0) {
    c.Output(0, x.dtype(), x.shape());
    return Status::Ok();
  }
  const int64_t n_stat = Product(stat_shape), per = x.elements() / std::max<int64_t>(n_stat, 1);
  std::vector<double> mean(n_stat, 0), sq(n_stat, 0);
  const auto strides = BroadcastStrides(stat_shape, x.shape());
  ForEachBroadcast(x.shape(), {strides}, [&](int64_t i, const std::vector<int64_t>& o) {
    mean[o[0]] += ElementAsDouble(x, i);
  });
  for (auto& m : mean) m /= static_cast<double>(per);
  ForEachBroadcast(x.shape(), {strides}, [&](int64_t i, const std::vector<int64_t>& o) {
    sq[o[0]] += std::pow(ElementAsDouble(x, i) - mean[o[0]], 2);
  });
  Tensor& y = c.Output(0, x.dtype(), x.shape());
  ForEachBroadcast(x.shape(), {strides}, [&](int64_t i, const std::vector<int64_t>& o) {
    SetElementFromDouble(y, i,
                         (ElementAsDouble(x, i) - mean[o[0]]) /
                             (std::sqrt(sq[o[0]] / static_cast<double>(per)) + 1e-9));
  });
  return Status::Ok();
}

}  // namespace

void RegisterMiscKernels(KernelTable& t) {
  t["Shrink"] = Shrink;
  t["HannWindow"] = [](KernelContext& c) { return Window(c, 0.5, 0.5, 0.0); };
  t["HammingWindow"] = [](KernelContext& c) { return Window(c, 25.0 / 46.0, 21.0 / 46.0, 0.0); };
  t["BlackmanWindow"] = [](KernelContext& c) { return Window(c, 0.42, 0.5, 0.08); };
  t["Det"] = Det;
  t["MeanVarianceNormalization"] = MeanVarianceNormalization;
}

}  // namespace ortc::exec

namespace ortc::exec {
namespace {

// Intersection over union of two boxes in either corner or center format.
double Iou(const double* a, const double* b, bool center) {
  auto corners = [center](const double* x, double out[4]) {
    if (center) {
      out[0] = x[1] - x[3] / 2;  // y1
      out[1] = x[0] - x[2] / 2;  // x1
      out[2] = x[1] + x[3] / 2;
      out[3] = x[0] + x[2] / 2;
    } else {
      out[0] = std::min(x[0], x[2]);
      out[1] = std::min(x[1], x[3]);
      out[2] = std::max(x[0], x[2]);
      out[3] = std::max(x[1], x[3]);
    }
  };
  double p[4], q[4];
  corners(a, p);
  corners(b, q);
  const double ih = std::max(0.0, std::min(p[2], q[2]) - std::max(p[0], q[0]));
  const double iw = std::max(0.0, std::min(p[3], q[3]) - std::max(p[1], q[1]));
  const double inter = ih * iw;
  const double uni = (p[2] - p[0]) * (p[3] - p[1]) + (q[2] - q[0]) * (q[3] - q[1]) - inter;
  return uni <= 0 ? 0 : inter / uni;
}

Status NonMaxSuppression(KernelContext& c) {
  const Tensor& boxes = c.in(0);
  const Tensor& scores = c.in(1);
  if (boxes.rank() != 3 || scores.rank() != 3 || boxes.shape()[0] != scores.shape()[0] ||
      boxes.shape()[1] != scores.shape()[2] || boxes.shape()[2] != 4)
    return c.Error(
        "NonMaxSuppression needs boxes of shape [batches, boxes, 4] and scores of shape "
        "[batches, classes, boxes]");
  // Read as double (it may be any integer type); a NaN or huge value must not reach the cast.
  const double max_read = c.has_input(2) && c.in(2).elements() ? ElementAsDouble(c.in(2), 0) : 0.0;
  const int64_t max_out = !(max_read > 0)      ? 0
                          : max_read >= 0x1p62 ? int64_t{1} << 62
                                               : static_cast<int64_t>(max_read);
  const double iou_th = c.has_input(3) && c.in(3).elements() ? ElementAsDouble(c.in(3), 0) : 0;
  const bool has_score_th = c.has_input(4) && c.in(4).elements();
  const double score_th = has_score_th ? ElementAsDouble(c.in(4), 0) : 0;
  const bool center = c.op().Int("center_point_box", 0) != 0;
  const int64_t B = scores.shape()[0], C = scores.shape()[1], N = scores.shape()[2];
  std::vector<int64_t> picked;
  std::vector<double> box(4), other(4);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t cl = 0; cl < C; ++cl) {
      std::vector<int64_t> order;
      for (int64_t i = 0; i < N; ++i) {
        if (!has_score_th || ElementAsDouble(scores, (b * C + cl) * N + i) > score_th)
          order.push_back(i);
      }
      std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
        return ElementAsDouble(scores, (b * C + cl) * N + x) >
               ElementAsDouble(scores, (b * C + cl) * N + y);
      });
      std::vector<int64_t> kept;
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= max_out) break;
        for (int k = 0; k < 4; ++k) box[k] = ElementAsDouble(boxes, (b * N + i) * 4 + k);
        bool suppressed = false;
        for (int64_t j : kept) {
          for (int k = 0; k < 4; ++k) other[k] = ElementAsDouble(boxes, (b * N + j) * 4 + k);
          if (Iou(box.data(), other.data(), center) > iou_th) {
            suppressed = true;
            break;
          }
        }
        if (!suppressed) kept.push_back(i);
      }
      for (int64_t i : kept) picked.insert(picked.end(), {b, cl, i});
    }
  Tensor& y = c.Output(0, DataType::kInt64, {static_cast<int64_t>(picked.size() / 3), 3});
  std::copy(picked.begin(), picked.end(), y.mutable_data<int64_t>());
  return Status::Ok();
}

}  // namespace

void RegisterDetectionKernels(KernelTable& t) {
  t["NonMaxSuppression"] = NonMaxSuppression;
}

}  // namespace ortc::exec
