// Reductions over axes: Reduce{Sum,Mean,Max,Min,Prod,L1,L2,LogSum,LogSumExp,SumSquare}.
#include <algorithm>
#include <cmath>
#include <functional>

#include "cpu/runtime/kernels/kernel_util.h"
#include "cpu/runtime/kernels/registry.h"

namespace ortc::exec {
namespace {

enum class Kind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

// Whether the reduced axes are the innermost ones (each output reads one contiguous row).
bool ReducesSuffix(const std::vector<bool>& reduced) {
  size_t first = reduced.size();
  while (first > 0 && reduced[first - 1]) --first;
  for (size_t d = 0; d < first; ++d)
    if (reduced[d]) return false;
  return first < reduced.size();
}

// Float rows: elements are read as float and min / max stay in float; sums accumulate in double,
// because a long float row summed in float drifts (a mean over a million elements of 0.1 comes
// out about 1% off; reductions_test shows it). Returns false for kinds left to the general path.
bool ReduceFloatRows(Kind kind, const float* x, int64_t rows, int64_t n, float* y) {
  switch (kind) {
    case Kind::kSum:
    case Kind::kMean:
    case Kind::kSumSquare:
    case Kind::kL2:
    case Kind::kL1:
    case Kind::kMax:
    case Kind::kMin:
      break;
    default:
      return false;
  }
#pragma omp parallel for if (rows * n >= (1 << 15)) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * n;
    if (kind == Kind::kMax || kind == Kind::kMin) {
      float m = row[0];
      for (int64_t i = 1; i < n; ++i)
        m = kind == Kind::kMax ? std::max(m, row[i]) : std::min(m, row[i]);
      y[r] = m;
      continue;
    }
    double acc = 0;
    if (kind == Kind::kSumSquare || kind == Kind::kL2) {
      for (int64_t i = 0; i < n; ++i) acc += static_cast<double>(row[i]) * row[i];
    } else if (kind == Kind::kL1) {
      for (int64_t i = 0; i < n; ++i) acc += std::fabs(static_cast<double>(row[i]));
    } else {
      for (int64_t i = 0; i < n; ++i) acc += row[i];
    }
    if (kind == Kind::kMean) acc /= static_cast<double>(n);
    if (kind == Kind::kL2) acc = std::sqrt(acc);
    y[r] = static_cast<float>(acc);
  }
  return true;
}

Status Reduce(KernelContext& c, Kind kind) {
  const Tensor& x = c.in(0);
  const auto& op = c.op();
  // Axes: an input since opset 18 (13 for ReduceSum), an attribute before.
  const int input_since = kind == Kind::kSum ? 13 : 18;
  std::vector<int64_t> axes;
  if (op.version >= input_since) {
    if (c.has_input(1)) {
      auto a = IntsOf(c.input(1));
      if (!a) return c.Error("axes must be int64");
      axes = *a;
    }
  } else {
    axes = op.Ints("axes");
  }
  const bool keep = op.Int("keepdims", 1) != 0;
  if (axes.empty() && op.Int("noop_with_empty_axes", 0) != 0) {
    c.SetOutput(0, x);
    return Status::Ok();
  }
  std::vector<bool> reduced(x.rank(), axes.empty());
  for (int64_t a : axes) {
    if (!NormaliseAxis(a, x.rank())) return c.Error("axis out of range");
    reduced[a] = true;
  }
  std::vector<int64_t> out_shape, keep_shape;
  for (int64_t d = 0; d < x.rank(); ++d) {
    keep_shape.push_back(reduced[d] ? 1 : x.shape()[d]);
    if (!reduced[d])
      out_shape.push_back(x.shape()[d]);
    else if (keep)
      out_shape.push_back(1);
  }
  Tensor& y = c.Output(0, x.dtype(), out_shape);
  const int64_t n_out = Product(keep_shape);
  const int64_t n_red = n_out == 0 ? 0 : x.elements() / std::max<int64_t>(n_out, 1);
  if (x.dtype() == DataType::kFloat && n_red > 0 && ReducesSuffix(reduced) &&
      ReduceFloatRows(kind, x.data<float>(), n_out, n_red, y.mutable_data<float>()))
    return Status::Ok();
  std::vector<double> acc(n_out, 0.0);
  const bool minmax = kind == Kind::kMax || kind == Kind::kMin;
  if (kind == Kind::kProd) std::fill(acc.begin(), acc.end(), 1.0);
  if (minmax) std::fill(acc.begin(), acc.end(), kind == Kind::kMax ? -INFINITY : INFINITY);
  // Max for LogSumExp stability.
  std::vector<double> peak(n_out, -INFINITY);
  const auto out_strides = BroadcastStrides(keep_shape, x.shape());
  if (kind == Kind::kLogSumExp) {
    ForEachBroadcast(x.shape(), {out_strides}, [&](int64_t i, const std::vector<int64_t>& o) {
      peak[o[0]] = std::max(peak[o[0]], ElementAsDouble(x, i));
    });
  }
  ForEachBroadcast(x.shape(), {out_strides}, [&](int64_t i, const std::vector<int64_t>& o) {
    const double v = ElementAsDouble(x, i);
    double& a = acc[o[0]];
    switch (kind) {
      case Kind::kSum:
      case Kind::kMean:
      case Kind::kLogSum:
        a += v;
        break;
      case Kind::kMax:
        a = std::max(a, v);
        break;
      case Kind::kMin:
        a = std::min(a, v);
        break;
      case Kind::kProd:
        a *= v;
        break;
      case Kind::kL1:
        a += std::fabs(v);
        break;
      case Kind::kL2:
      case Kind::kSumSquare:
        a += v * v;
        break;
      case Kind::kLogSumExp:
        a += std::exp(v - peak[o[0]]);
        break;
    }
  });
  for (int64_t i = 0; i < n_out; ++i) {
    double v = acc[i];
    if (kind == Kind::kMean) v = n_red ? v / static_cast<double>(n_red) : NAN;
    if (kind == Kind::kL2) v = std::sqrt(v);
    if (kind == Kind::kLogSum) v = std::log(v);
    if (kind == Kind::kLogSumExp) v = std::log(v) + peak[i];
    if (minmax && n_red == 0) v = 0;
    SetElementFromDouble(y, i, v);
  }
  return Status::Ok();
}

}  // namespace

void RegisterReductionKernels(KernelTable& t) {
  t["ReduceSum"] = [](KernelContext& c) { return Reduce(c, Kind::kSum); };
  t["ReduceMean"] = [](KernelContext& c) { return Reduce(c, Kind::kMean); };
  t["ReduceMax"] = [](KernelContext& c) { return Reduce(c, Kind::kMax); };
  t["ReduceMin"] = [](KernelContext& c) { return Reduce(c, Kind::kMin); };
  t["ReduceProd"] = [](KernelContext& c) { return Reduce(c, Kind::kProd); };
  t["ReduceL1"] = [](KernelContext& c) { return Reduce(c, Kind::kL1); };
  t["ReduceL2"] = [](KernelContext& c) { return Reduce(c, Kind::kL2); };
  t["ReduceLogSum"] = [](KernelContext& c) { return Reduce(c, Kind::kLogSum); };
  t["ReduceLogSumExp"] = [](KernelContext& c) { return Reduce(c, Kind::kLogSumExp); };
  t["ReduceSumSquare"] = [](KernelContext& c) { return Reduce(c, Kind::kSumSquare); };
}

}  // namespace ortc::exec
