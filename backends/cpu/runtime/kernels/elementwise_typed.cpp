#include "cpu/runtime/kernels/elementwise_typed.h"

#include <cstdint>
#include <vector>

#include "cpu/runtime/kernels/kernel_util.h"

namespace ortc::exec {
namespace {

// y = f(a, b) broadcast: the walk per row of the last axis, the row a tight loop over the two
// operands' strides (0 for a broadcast operand, 1 otherwise).
template <typename A, typename Y, typename F>
void BroadcastRows(const Tensor& a, const Tensor& b, const std::vector<int64_t>& shape, Y* y, F f) {
  const A* pa = a.data<A>();
  const A* pb = b.data<A>();
  if (a.shape() == b.shape()) {
    for (int64_t i = 0; i < a.elements(); ++i) y[i] = f(pa[i], pb[i]);
    return;
  }
  if (shape.empty()) {
    y[0] = f(pa[0], pb[0]);
    return;
  }
  auto sa = BroadcastStrides(a.shape(), shape), sb = BroadcastStrides(b.shape(), shape);
  const int64_t last = shape.back(), la = sa.back(), lb = sb.back();
  sa.pop_back();
  sb.pop_back();
  const std::vector<int64_t> outer(shape.begin(), shape.end() - 1);
  ForEachBroadcast(outer, {sa, sb}, [&](int64_t i, const std::vector<int64_t>& o) {
    const A* ra = pa + o[0];
    const A* rb = pb + o[1];
    Y* ry = y + i * last;
    for (int64_t k = 0; k < last; ++k) ry[k] = f(ra[k * la], rb[k * lb]);
  });
}

template <typename T>
void Compare(const Tensor& a, const Tensor& b, const std::vector<int64_t>& shape, bool* y,
             CompareOp op) {
  switch (op) {
    case CompareOp::kEqual:
      return BroadcastRows<T>(a, b, shape, y, [](T x, T z) { return x == z; });
    case CompareOp::kLess:
      return BroadcastRows<T>(a, b, shape, y, [](T x, T z) { return x < z; });
    case CompareOp::kGreater:
      return BroadcastRows<T>(a, b, shape, y, [](T x, T z) { return x > z; });
    case CompareOp::kLessOrEqual:
      return BroadcastRows<T>(a, b, shape, y, [](T x, T z) { return x <= z; });
    case CompareOp::kGreaterOrEqual:
      return BroadcastRows<T>(a, b, shape, y, [](T x, T z) { return x >= z; });
  }
}

template <typename To>
bool CastInto(const Tensor& x, To* y) {
  const int64_t n = x.elements();
  return DispatchNumeric(x.dtype(), [&](auto v) {
    using From = decltype(v);
    const From* p = x.data<From>();
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<To>(p[i]);
  });
}

}  // namespace

bool CompareTyped(KernelContext& c, CompareOp op) {
  const Tensor& a = c.in(0);
  const Tensor& b = c.in(1);
  const DataType t = a.dtype();
  if (b.dtype() != t || (t != DataType::kFloat && t != DataType::kDouble && t != DataType::kInt32 &&
                         t != DataType::kInt64))
    return false;
  auto shape = BroadcastShape({a.shape(), b.shape()});
  if (!shape) return false;
  bool* y = c.OutputUninit(0, DataType::kBool, *shape).mutable_data<bool>();
  if (Product(*shape) == 0) return true;
  switch (t) {
    case DataType::kFloat:
      Compare<float>(a, b, *shape, y, op);
      break;
    case DataType::kDouble:
      Compare<double>(a, b, *shape, y, op);
      break;
    case DataType::kInt32:
      Compare<int32_t>(a, b, *shape, y, op);
      break;
    default:
      Compare<int64_t>(a, b, *shape, y, op);
  }
  return true;
}

bool LogicTyped(KernelContext& c, LogicOp op) {
  const Tensor& a = c.in(0);
  const Tensor& b = c.in(1);
  if (a.dtype() != DataType::kBool || b.dtype() != DataType::kBool) return false;
  auto shape = BroadcastShape({a.shape(), b.shape()});
  if (!shape) return false;
  bool* y = c.OutputUninit(0, DataType::kBool, *shape).mutable_data<bool>();
  if (Product(*shape) == 0) return true;
  switch (op) {
    case LogicOp::kAnd:
      BroadcastRows<bool>(a, b, *shape, y, [](bool x, bool z) { return x && z; });
      break;
    case LogicOp::kOr:
      BroadcastRows<bool>(a, b, *shape, y, [](bool x, bool z) { return x || z; });
      break;
    case LogicOp::kXor:
      BroadcastRows<bool>(a, b, *shape, y, [](bool x, bool z) { return x != z; });
      break;
  }
  return true;
}

bool CastTyped(const Tensor& x, DataType to, Tensor* y) {
  const DataType from = x.dtype();
  const bool numeric_from = from == DataType::kBool || IsIntegerType(from) ||
                            from == DataType::kFloat || from == DataType::kDouble;
  if (!numeric_from) return false;
  const int64_t n = x.elements();
  if (to == DataType::kFloat) return CastInto(x, y->mutable_data<float>());
  if (to == DataType::kDouble) return CastInto(x, y->mutable_data<double>());
  if (to == DataType::kBool) {
    bool* out = y->mutable_data<bool>();
    return DispatchNumeric(from, [&](auto v) {
      using From = decltype(v);
      const From* p = x.data<From>();
      for (int64_t i = 0; i < n; ++i) out[i] = p[i] != From(0);
    });
  }
  if (from == DataType::kBool && (IsIntegerType(to))) {
    const bool* p = x.data<bool>();
    return DispatchNumeric(to, [&](auto v) {
      using To = decltype(v);
      To* out = y->mutable_data<To>();
      for (int64_t i = 0; i < n; ++i) out[i] = p[i] ? To(1) : To(0);
    });
  }
  return false;
}

}  // namespace ortc::exec
