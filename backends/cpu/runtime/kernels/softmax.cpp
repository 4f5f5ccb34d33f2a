// Softmax, LogSoftmax and Hardmax over one axis.
#include <algorithm>
#include <cmath>

#include "cpu/runtime/kernels/kernel_util.h"
#include "cpu/runtime/kernels/registry.h"
#include "cpu/runtime/kernels/vector_math.h"

namespace ortc::exec {
namespace {

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
    // Each row in one vectorised pass set (SoftmaxRow); rows spread over the intra-op threads.
    const float* in = x.data<float>();
    float* out = y.mutable_data<float>();
#pragma omp parallel for if (x.elements() >= (1 << 15)) schedule(static)
    for (int64_t o = 0; o < outer; ++o) {
      SoftmaxRow(in + o * dim, out + o * dim, dim);
    }
    return Status::Ok();
  }
  std::vector<double> row(static_cast<size_t>(dim));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      double peak = -INFINITY;
      int64_t arg = 0;
      for (int64_t k = 0; k < dim; ++k) {
        row[k] = ElementAsDouble(x, (o * dim + k) * inner + j);
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
        SetElementFromDouble(y, (o * dim + k) * inner + j, v);
      }
    }
  return Status::Ok();
}

}  // namespace

void RegisterSoftmaxKernels(KernelTable& t) {
  t["Softmax"] = [](KernelContext& c) { return Softmax(c, SoftKind::kSoftmax); };
  t["LogSoftmax"] = [](KernelContext& c) { return Softmax(c, SoftKind::kLogSoftmax); };
  t["Hardmax"] = [](KernelContext& c) { return Softmax(c, SoftKind::kHardmax); };
}

}  // namespace ortc::exec
