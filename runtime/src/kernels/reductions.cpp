// Reductions over axes: Reduce{Sum,Mean,Max,Min,Prod,L1,L2,LogSum,LogSumExp,SumSquare}.
#include <cmath>
#include <functional>

#include "kernels/kernel_util.h"
#include "kernels/registry.h"

namespace ortc::exec {
namespace {

enum class Kind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

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
  std::vector<double> acc(n_out, 0.0);
  const bool minmax = kind == Kind::kMax || kind == Kind::kMin;
  if (kind == Kind::kProd) std::fill(acc.begin(), acc.end(), 1.0);
  if (minmax) std::fill(acc.begin(), acc.end(), kind == Kind::kMax ? -INFINITY : INFINITY);
  // Max for LogSumExp stability.
  std::vector<double> peak(n_out, -INFINITY);
  const auto out_strides = BroadcastStrides(keep_shape, x.shape());
  if (kind == Kind::kLogSumExp) {
    ForEachBroadcast(x.shape(), {out_strides}, [&](int64_t i, const std::vector<int64_t>& o) {
      peak[o[0]] = std::max(peak[o[0]], ReadAsDouble(x, i));
    });
  }
  ForEachBroadcast(x.shape(), {out_strides}, [&](int64_t i, const std::vector<int64_t>& o) {
    const double v = ReadAsDouble(x, i);
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
    WriteFromDouble(y, i, v);
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
