#include "cpu/runtime/kernels/elementwise_typed.h"

#include <cstdint>
#include <vector>

#include "cpu/runtime/kernels/kernel_util.h"

namespace ortc::exec {
namespace {

// y = f(a, b) over two inputs of type A broadcast into a bool output; false when they do not
// broadcast. Rows of the last axis run as tight loops (ForEachBroadcastRow).
template <typename A, typename F>
bool BinaryToBool(KernelContext& c, F f) {
  const Tensor& a = c.in(0);
  const Tensor& b = c.in(1);
  auto shape = BroadcastShape({a.shape(), b.shape()});
  if (!shape) return false;
  bool* y = c.OutputUninit(0, DataType::kBool, *shape).mutable_data<bool>();
  const A* pa = a.data<A>();
  const A* pb = b.data<A>();
  if (Product(*shape) == 0) return true;
  if (a.shape() == b.shape()) {
    for (int64_t i = 0; i < a.elements(); ++i) y[i] = f(pa[i], pb[i]);
    return true;
  }
  if (shape->empty()) {
    y[0] = f(pa[0], pb[0]);
    return true;
  }
  ForEachBroadcastRow(
      *shape, {BroadcastStrides(a.shape(), *shape), BroadcastStrides(b.shape(), *shape)},
      [&](int64_t row, const std::vector<int64_t>& o, const std::vector<int64_t>& step, int64_t n) {
        const A* ra = pa + o[0];
        const A* rb = pb + o[1];
        bool* ry = y + row * n;
        const int64_t sa = step[0], sb = step[1];
        for (int64_t k = 0; k < n; ++k) ry[k] = f(ra[k * sa], rb[k * sb]);
      });
  return true;
}

template <typename T>
bool Compare(KernelContext& c, CompareOp op) {
  switch (op) {
    case CompareOp::kEqual:
      return BinaryToBool<T>(c, [](T x, T z) { return x == z; });
    case CompareOp::kLess:
      return BinaryToBool<T>(c, [](T x, T z) { return x < z; });
    case CompareOp::kGreater:
      return BinaryToBool<T>(c, [](T x, T z) { return x > z; });
    case CompareOp::kLessOrEqual:
      return BinaryToBool<T>(c, [](T x, T z) { return x <= z; });
    case CompareOp::kGreaterOrEqual:
      return BinaryToBool<T>(c, [](T x, T z) { return x >= z; });
  }
  return false;
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
  const DataType t = c.in(0).dtype();
  if (c.in(1).dtype() != t) return false;
  switch (t) {
    case DataType::kFloat:
      return Compare<float>(c, op);
    case DataType::kDouble:
      return Compare<double>(c, op);
    case DataType::kInt32:
      return Compare<int32_t>(c, op);
    case DataType::kInt64:
      return Compare<int64_t>(c, op);
    default:
      return false;
  }
}

bool LogicTyped(KernelContext& c, LogicOp op) {
  if (c.in(0).dtype() != DataType::kBool || c.in(1).dtype() != DataType::kBool) return false;
  switch (op) {
    case LogicOp::kAnd:
      return BinaryToBool<bool>(c, [](bool x, bool z) { return x && z; });
    case LogicOp::kOr:
      return BinaryToBool<bool>(c, [](bool x, bool z) { return x || z; });
    case LogicOp::kXor:
      return BinaryToBool<bool>(c, [](bool x, bool z) { return x != z; });
  }
  return false;
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
