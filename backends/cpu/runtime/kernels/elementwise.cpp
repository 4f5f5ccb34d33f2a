// Elementwise kernels: unary math and activations, broadcasting binary arithmetic,
// comparisons and logic, variadic Sum/Mean/Max/Min, Where, Clip, Cast.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>

#include "cpu/runtime/kernels/elementwise_typed.h"
#include "cpu/runtime/kernels/kernel_util.h"
#include "cpu/runtime/kernels/registry.h"
#include "cpu/runtime/kernels/vector_math.h"

namespace ortc::exec {
namespace {

// Below this many elements a loop runs on the calling thread: starting the pool costs more.
constexpr int64_t kParallelElements = 1 << 15;

// Calls f(begin, end) over [0, n) in chunks, spread over the intra-op threads when n is large.
template <typename F>
void ForChunks(int64_t n, F f) {
  constexpr int64_t kChunk = 1 << 14;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for if (n >= kParallelElements) schedule(static)
  for (int64_t k = 0; k < chunks; ++k) f(k * kChunk, std::min(n, (k + 1) * kChunk));
}

// Applies f (in double, or in T for exact integer ops) to every element.
template <typename F>
Status Unary(KernelContext& c, F f, bool ints_ok = false) {
  const Tensor& x = c.in(0);
  if (!IsFloatType(x.dtype()) && !ints_ok)
    return c.Error("element type " + DataTypeName(x.dtype()) + " is not supported");
  Tensor& y = c.Output(0, x.dtype(), x.shape());
  const int64_t n = x.elements();
  if (x.dtype() == DataType::kFloat) {
    const float* a = x.data<float>();
    float* b = y.mutable_data<float>();
#pragma omp parallel for if (n >= kParallelElements) schedule(static)
    for (int64_t i = 0; i < n; ++i) b[i] = static_cast<float>(f(a[i]));
    return Status::Ok();
  }
  for (int64_t i = 0; i < n; ++i) SetElementFromDouble(y, i, f(ElementAsDouble(x, i)));
  return Status::Ok();
}

// Float tensors computed in float (vectorisable, as the model's type), others through
// Unary's double path. For ops whose float and double forms differ only in rounding.
template <typename FF, typename F>
Status UnaryFloatFirst(KernelContext& c, FF ff, F f) {
  const Tensor& x = c.in(0);
  if (x.dtype() != DataType::kFloat) return Unary(c, f);
  Tensor& y = c.OutputUninit(0, x.dtype(), x.shape());
  const int64_t n = x.elements();
  const float* a = x.data<float>();
  float* b = y.mutable_data<float>();
#pragma omp parallel for if (n >= kParallelElements) schedule(static)
  for (int64_t i = 0; i < n; ++i) b[i] = ff(a[i]);
  return Status::Ok();
}

// Float tensors through a vectorised array function (vector_math.h), in chunks spread over the
// intra-op threads; other types through Unary's double path with `f`.
template <typename ArrayFn, typename F>
Status UnaryArray(KernelContext& c, ArrayFn array_fn, F f) {
  const Tensor& x = c.in(0);
  if (x.dtype() != DataType::kFloat) return Unary(c, f);
  Tensor& y = c.OutputUninit(0, x.dtype(), x.shape());
  ForChunks(x.elements(), [&](int64_t begin, int64_t end) {
    array_fn(x.data<float>() + begin, y.mutable_data<float>() + begin, end - begin);
  });
  return Status::Ok();
}

#define UNARY_ARRAY(NAME, ARRAY_FN, EXPR)                            \
  Status NAME(KernelContext& c) {                                    \
    return UnaryArray(c, ARRAY_FN, [](double v) { return (EXPR); }); \
  }

double Sigmoid(double v) {
  return v >= 0 ? 1.0 / (1.0 + std::exp(-v)) : std::exp(v) / (1.0 + std::exp(v));
}

#define UNARY(NAME, EXPR)                              \
  Status NAME(KernelContext& c) {                      \
    const auto& op = c.op();                           \
    (void)op;                                          \
    return Unary(c, [&](double v) { return (EXPR); }); \
  }

// Computed in the tensor's own type for float (g is generic), in double for the others.
#define UNARY_FLOAT_FIRST(NAME, EXPR)                                      \
  Status NAME(KernelContext& c) {                                          \
    auto g = [](auto v) -> decltype(v) {                                   \
      using T = decltype(v);                                               \
      (void)sizeof(T);                                                     \
      return (EXPR);                                                       \
    };                                                                     \
    return UnaryFloatFirst(                                                \
        c, [&](float v) { return g(v); }, [&](double v) { return g(v); }); \
  }

UNARY_ARRAY(Exp, ExpArray, std::exp(v))
UNARY(Log, std::log(v))
UNARY_FLOAT_FIRST(Sqrt, std::sqrt(v))
UNARY(Reciprocal, 1.0 / v)
UNARY(Sin, std::sin(v))
UNARY(Cos, std::cos(v))
UNARY(Tan, std::tan(v))
UNARY(Asin, std::asin(v))
UNARY(Acos, std::acos(v))
UNARY(Atan, std::atan(v))
UNARY(Sinh, std::sinh(v))
UNARY(Cosh, std::cosh(v))
UNARY(Asinh, std::asinh(v))
UNARY(Acosh, std::acosh(v))
UNARY(Atanh, std::atanh(v))
UNARY_ARRAY(Tanh, TanhArray, std::tanh(v))
UNARY_ARRAY(SigmoidK, SigmoidArray, Sigmoid(v))
UNARY_ARRAY(Erf, ErfArray, std::erf(v))
UNARY(Floor, std::floor(v))
UNARY(Ceil, std::ceil(v))
UNARY(Round, std::nearbyint(v))
UNARY(Softplus, v > 20 ? v : std::log1p(std::exp(v)))
UNARY(Softsign, v / (1 + std::fabs(v)))
UNARY(HardSigmoid,
      std::max(0.0, std::min(1.0, op.Float("alpha", 0.2f) * v + op.Float("beta", 0.5f))))
UNARY_FLOAT_FIRST(HardSwish, v* std::max(T(0), std::min(T(1), v / T(6) + T(0.5))))
UNARY(Elu, v >= 0 ? v : op.Float("alpha", 1.0f) * (std::exp(v) - 1))
UNARY(Selu, op.Float("gamma", 1.05070102214813232421875f) *
                (v > 0 ? v : op.Float("alpha", 1.67326319217681884765625f) * (std::exp(v) - 1)))
UNARY(Celu, std::max(0.0, v) + std::min(0.0, op.Float("alpha", 1.0f) *
                                                 (std::exp(v / op.Float("alpha", 1.0f)) - 1)))
UNARY(ThresholdedRelu, v > op.Float("alpha", 1.0f) ? v : 0.0)
UNARY(Mish, v* std::tanh(v > 20 ? v : std::log1p(std::exp(v))))

Status Gelu(KernelContext& c) {
  const bool tanh_approx = c.op().String("approximate", "none") == "tanh";
  return UnaryArray(
      c, [&](const float* x, float* y, int64_t n) { GeluArray(x, y, n, tanh_approx); },
      [&](double v) {
        if (tanh_approx)
          return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
        return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
      });
}

Status LeakyRelu(KernelContext& c) {
  const double a = c.op().Float("alpha", 0.01f);
  return Unary(c, [&](double v) { return v >= 0 ? v : a * v; });
}

// Ops exact on integers too.
Status Relu(KernelContext& c) {
  return Unary(
      c, [](double v) { return v > 0 ? v : 0.0; }, true);
}
// Integer Add, Sub and Mul wrap modulo 2^64, as the hardware (and ONNX Runtime) does: computed
// on uint64_t, since signed overflow is undefined behaviour (fuzz_model found an int64 Add that
// overflowed).
int64_t WrappingAdd(int64_t x, int64_t y) {
  return static_cast<int64_t>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y));
}
int64_t WrappingSub(int64_t x, int64_t y) {
  return static_cast<int64_t>(static_cast<uint64_t>(x) - static_cast<uint64_t>(y));
}
int64_t WrappingMul(int64_t x, int64_t y) {
  return static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
}

// Ops exact on 64-bit integers: int64 goes through int64 arithmetic, not double. `f` is
// generic (called with int64_t or double).
template <typename F>
Status UnaryInt64Exact(KernelContext& c, F f) {
  const Tensor& x = c.in(0);
  if (x.dtype() != DataType::kInt64)
    return Unary(
        c, [&](double v) { return f(v); }, true);
  Tensor& y = c.Output(0, x.dtype(), x.shape());
  const int64_t n = x.elements();
  for (int64_t i = 0; i < n; ++i) y.mutable_data<int64_t>()[i] = f(x.data<int64_t>()[i]);
  return Status::Ok();
}
// On int64, INT64_MIN negates to itself (wrapping, as the hardware does): -v would overflow.
Status Abs(KernelContext& c) {
  return UnaryInt64Exact(c, [](auto v) -> decltype(v) {
    if constexpr (std::is_same_v<decltype(v), int64_t>) return v < 0 ? WrappingSub(0, v) : v;
    return v < 0 ? -v : v;
  });
}
Status Neg(KernelContext& c) {
  return UnaryInt64Exact(c, [](auto v) -> decltype(v) {
    if constexpr (std::is_same_v<decltype(v), int64_t>) return WrappingSub(0, v);
    return -v;
  });
}
Status Sign(KernelContext& c) {
  return Unary(
      c, [](double v) { return static_cast<double>((v > 0) - (v < 0)); }, true);
}
Status Identity(KernelContext& c) {
  c.SetOutput(0, c.in(0));
  return Status::Ok();
}

Status BoolPredicate(KernelContext& c, const std::function<bool(double)>& f) {
  const Tensor& x = c.in(0);
  Tensor& y = c.Output(0, DataType::kBool, x.shape());
  for (int64_t i = 0; i < x.elements(); ++i) y.mutable_data<bool>()[i] = f(ElementAsDouble(x, i));
  return Status::Ok();
}
Status IsNaN(KernelContext& c) {
  const Tensor& x = c.in(0);
  if (x.dtype() == DataType::kFloat) {  // SDPA's guard runs it over every attention score
    Tensor& y = c.OutputUninit(0, DataType::kBool, x.shape());
    const float* a = x.data<float>();
    bool* b = y.mutable_data<bool>();
    ForChunks(x.elements(), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) b[i] = a[i] != a[i];
    });
    return Status::Ok();
  }
  return BoolPredicate(c, [](double v) { return std::isnan(v); });
}
Status IsInf(KernelContext& c) {
  const bool pos = c.op().Int("detect_positive", 1) != 0,
             neg = c.op().Int("detect_negative", 1) != 0;
  return BoolPredicate(
      c, [&](double v) { return std::isinf(v) && ((v > 0 && pos) || (v < 0 && neg)); });
}
Status Not(KernelContext& c) {
  const Tensor& x = c.in(0);
  if (x.dtype() == DataType::kBool) {
    Tensor& y = c.OutputUninit(0, DataType::kBool, x.shape());
    for (int64_t i = 0; i < x.elements(); ++i) y.mutable_data<bool>()[i] = !x.data<bool>()[i];
    return Status::Ok();
  }
  return BoolPredicate(c, [](double v) { return v == 0; });
}

// Broadcasting binary op. `f` works in double; integer types whose results need exactness
// (Add/Sub/Mul/Div on int64) use `fi`.
Status Binary(KernelContext& c, DataType out_type, const std::function<double(double, double)>& f,
              const std::function<int64_t(int64_t, int64_t)>& fi = nullptr) {
  const Tensor& a = c.in(0);
  const Tensor& b = c.in(1);
  auto shape = BroadcastShape({a.shape(), b.shape()});
  if (!shape) return c.Error("shapes cannot be broadcast together");
  Tensor& y = c.Output(0, out_type, *shape);
  const std::vector<std::vector<int64_t>> strides = {BroadcastStrides(a.shape(), *shape),
                                                     BroadcastStrides(b.shape(), *shape)};
  if (a.dtype() == DataType::kFloat && b.dtype() == DataType::kFloat &&
      out_type == DataType::kFloat) {
    const float* pa = a.data<float>();
    const float* pb = b.data<float>();
    float* py = y.mutable_data<float>();
    if (a.shape() == b.shape()) {
      for (int64_t i = 0; i < y.elements(); ++i) py[i] = static_cast<float>(f(pa[i], pb[i]));
      return Status::Ok();
    }
    ForEachBroadcast(*shape, strides, [&](int64_t i, const std::vector<int64_t>& o) {
      py[i] = static_cast<float>(f(pa[o[0]], pb[o[1]]));
    });
    return Status::Ok();
  }
  // Both operands must be 64-bit integers: the exact path reads them as such (an int32 B was
  // read past its end).
  const bool int64_exact = fi &&
                           (a.dtype() == DataType::kInt64 || a.dtype() == DataType::kUint64) &&
                           b.dtype() == a.dtype() && out_type == a.dtype();
  ForEachBroadcast(*shape, strides, [&](int64_t i, const std::vector<int64_t>& o) {
    if (int64_exact) {
      y.mutable_data<int64_t>()[i] = fi(a.data<int64_t>()[o[0]], b.data<int64_t>()[o[1]]);
    } else {
      SetElementFromDouble(y, i, f(ElementAsDouble(a, o[0]), ElementAsDouble(b, o[1])));
    }
  });
  return Status::Ok();
}

// Float fast path of broadcasting binary ops: the innermost dimension runs as a tight loop.
template <typename F>
bool BinaryFloat(KernelContext& c, F f) {
  const Tensor& a = c.in(0);
  const Tensor& b = c.in(1);
  if (a.dtype() != DataType::kFloat || b.dtype() != DataType::kFloat) return false;
  auto shape = BroadcastShape({a.shape(), b.shape()});
  if (!shape) return false;
  Tensor& y = c.OutputUninit(0, DataType::kFloat, *shape);
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  float* py = y.mutable_data<float>();
  if (y.elements() == 0) return true;
  const int64_t n = y.elements();
  if (a.shape() == b.shape()) {
#pragma omp parallel for if (n >= kParallelElements) schedule(static)
    for (int64_t i = 0; i < n; ++i) py[i] = f(pa[i], pb[i]);
    return true;
  }
  // One side a single value: a tight loop with the scalar hoisted.
  if (b.elements() == 1 && a.elements() == n) {
    const float k = pb[0];
#pragma omp parallel for if (n >= kParallelElements) schedule(static)
    for (int64_t i = 0; i < n; ++i) py[i] = f(pa[i], k);
    return true;
  }
  if (a.elements() == 1 && b.elements() == n) {
    const float k = pa[0];
#pragma omp parallel for if (n >= kParallelElements) schedule(static)
    for (int64_t i = 0; i < n; ++i) py[i] = f(k, pb[i]);
    return true;
  }
  if (shape->empty()) {
    py[0] = f(pa[0], pb[0]);
    return true;
  }
  auto sa = BroadcastStrides(a.shape(), *shape), sb = BroadcastStrides(b.shape(), *shape);
  const int64_t last = shape->back(), la = sa.back(), lb = sb.back();
  // One side full, the other one row repeated (a per-channel operand of a channels-last
  // tensor): rows without the per-row index bookkeeping.
  const int64_t rows = n / std::max<int64_t>(last, 1);
  if (a.elements() == n && b.elements() == last && lb == 1) {
#pragma omp parallel for if (n >= kParallelElements) schedule(static)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < last; ++k) py[r * last + k] = f(pa[r * last + k], pb[k]);
    return true;
  }
  if (b.elements() == n && a.elements() == last && la == 1) {
#pragma omp parallel for if (n >= kParallelElements) schedule(static)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < last; ++k) py[r * last + k] = f(pa[k], pb[r * last + k]);
    return true;
  }
  std::vector<int64_t> outer(shape->begin(), shape->end() - 1);
  sa.pop_back();
  sb.pop_back();
  ForEachBroadcast(outer, {sa, sb}, [&](int64_t i, const std::vector<int64_t>& o) {
    float* yo = py + i * last;
    const float* ap = pa + o[0];
    const float* bp = pb + o[1];
    // Unit and zero strides get their own loops so they vectorise (a per-channel operand of a
    // channels-last tensor is a contiguous row; a per-row value a broadcast scalar).
    if (la == 1 && lb == 1) {
      for (int64_t k = 0; k < last; ++k) yo[k] = f(ap[k], bp[k]);
    } else if (la == 1 && lb == 0) {
      const float bv = bp[0];
      for (int64_t k = 0; k < last; ++k) yo[k] = f(ap[k], bv);
    } else if (la == 0 && lb == 1) {
      const float av = ap[0];
      for (int64_t k = 0; k < last; ++k) yo[k] = f(av, bp[k]);
    } else {
      for (int64_t k = 0; k < last; ++k) yo[k] = f(ap[k * la], bp[k * lb]);
    }
  });
  return true;
}

bool IsIntegral(DataType t) {
  return !IsFloatType(t) && t != DataType::kBool && t != DataType::kString;
}

Status Add(KernelContext& c) {
  if (BinaryFloat(c, [](float x, float y) { return x + y; })) return Status::Ok();
  return Binary(c, c.in(0).dtype(), std::plus<double>(), WrappingAdd);
}
Status Sub(KernelContext& c) {
  if (BinaryFloat(c, [](float x, float y) { return x - y; })) return Status::Ok();
  return Binary(c, c.in(0).dtype(), std::minus<double>(), WrappingSub);
}
Status Mul(KernelContext& c) {
  if (BinaryFloat(c, [](float x, float y) { return x * y; })) return Status::Ok();
  return Binary(c, c.in(0).dtype(), std::multiplies<double>(), WrappingMul);
}
Status Div(KernelContext& c) {
  if (BinaryFloat(c, [](float x, float y) { return x / y; })) return Status::Ok();
  if (c.in(0).dtype() == DataType::kUint64) {
    return Binary(
        c, c.in(0).dtype(), [](double x, double y) { return y == 0 ? 0.0 : std::trunc(x / y); },
        [](int64_t x, int64_t y) {
          const auto ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
          return static_cast<int64_t>(uy == 0 ? 0 : ux / uy);
        });
  }
  if (IsIntegral(c.in(0).dtype())) {
    // INT64_MIN / -1 overflows (SIGFPE on x86): it wraps to INT64_MIN, as negation does.
    return Binary(
        c, c.in(0).dtype(), [](double x, double y) { return y == 0 ? 0.0 : std::trunc(x / y); },
        [](int64_t x, int64_t y) { return y == 0    ? 0
                                          : y == -1 ? WrappingSub(0, x)
                                                    : x / y; });
  }
  return Binary(c, c.in(0).dtype(), std::divides<double>());
}
// A float base to one constant power (RMSNorm's x^2, the tanh GELU's x^3, of any exponent
// type): squares and cubes as products, the rest through powf, without the double round trip.
bool PowFloatScalar(KernelContext& c) {
  const Tensor& x = c.in(0);
  const Tensor& e = c.in(1);
  if (x.dtype() != DataType::kFloat || e.elements() != 1 || e.rank() > x.rank() ||
      e.dtype() == DataType::kString)
    return false;
  const double k = ElementAsDouble(e, 0);
  Tensor& y = c.OutputUninit(0, DataType::kFloat, x.shape());
  const float* a = x.data<float>();
  float* b = y.mutable_data<float>();
  const auto kf = static_cast<float>(k);
  ForChunks(x.elements(), [&](int64_t begin, int64_t end) {
    if (k == 2) {
      for (int64_t i = begin; i < end; ++i) b[i] = a[i] * a[i];
    } else if (k == 3) {
      for (int64_t i = begin; i < end; ++i) b[i] = a[i] * a[i] * a[i];
    } else {
      for (int64_t i = begin; i < end; ++i) b[i] = std::pow(a[i], kf);
    }
  });
  return true;
}

Status Pow(KernelContext& c) {
  if (PowFloatScalar(c)) return Status::Ok();
  return Binary(c, c.in(0).dtype(), [](double x, double y) { return std::pow(x, y); });
}
Status Mod(KernelContext& c) {
  const bool fmod = c.op().Int("fmod", 0) != 0;
  return Binary(c, c.in(0).dtype(), [fmod](double x, double y) {
    if (fmod) return std::fmod(x, y);
    if (y == 0) return 0.0;
    double r = std::fmod(x, y);
    if (r != 0 && ((r < 0) != (y < 0))) r += y;
    return r;
  });
}
Status PRelu(KernelContext& c) {
  // Older exporters give a per-channel slope [C] for an [N, C, ...] input; numpy broadcasting
  // would align it with the last axis, so it is reshaped to [C, 1, ...] first.
  const Tensor& x = c.in(0);
  const Tensor& slope = c.in(1);
  if (slope.rank() == 1 && x.rank() > 2 && slope.shape()[0] == x.shape()[1] &&
      slope.shape()[0] != x.shape().back()) {
    std::vector<int64_t> shape(static_cast<size_t>(x.rank() - 1), 1);
    shape[0] = slope.shape()[0];
    Tensor reshaped = slope.Reshaped(shape);
    std::vector<Tensor> out(1);
    KernelContext inner(c.op(), {&x, &reshaped}, &out);
    Status s = Binary(inner, x.dtype(), [](double v, double k) { return v < 0 ? k * v : v; });
    c.SetOutput(0, out[0]);
    return s;
  }
  return Binary(c, x.dtype(), [](double v, double k) { return v < 0 ? k * v : v; });
}
// Bitwise ops on integer operands of one type, on their bits.
Status BinaryBits(KernelContext& c, bool unsigned_only,
                  const std::function<uint64_t(uint64_t, uint64_t)>& f) {
  const Tensor& a = c.in(0);
  const Tensor& b = c.in(1);
  const DataType t = a.dtype();
  const bool is_unsigned = t == DataType::kUint8 || t == DataType::kUint16 ||
                           t == DataType::kUint32 || t == DataType::kUint64;
  if (!IsIntegerType(t) || b.dtype() != t || (unsigned_only && !is_unsigned))
    return c.Error(std::string("operands must be ") + (unsigned_only ? "unsigned " : "") +
                   "integers of one type");
  auto shape = BroadcastShape({a.shape(), b.shape()});
  if (!shape) return c.Error("shapes cannot be broadcast together");
  Tensor& y = c.Output(0, t, *shape);
  ForEachBroadcast(*shape,
                   {BroadcastStrides(a.shape(), *shape), BroadcastStrides(b.shape(), *shape)},
                   [&](int64_t i, const std::vector<int64_t>& o) {
                     WriteBits(y, i, f(ReadBits(a, o[0]), ReadBits(b, o[1])));
                   });
  return Status::Ok();
}

Status BitShift(KernelContext& c) {
  const bool left = c.op().String("direction", "") == "LEFT";
  // Bits shifted past the element's width are dropped by WriteBits's truncation.
  return BinaryBits(c, true, [left](uint64_t u, uint64_t k) -> uint64_t {
    return k >= 64 ? 0 : (left ? u << k : u >> k);
  });
}

// Comparisons and logic: same-typed operands through their typed fast paths
// (elementwise_typed.h), the rest in double.
#define COMPARE(NAME, FAST, EXPR)                                                \
  Status NAME(KernelContext& c) {                                                \
    if (FAST) return Status::Ok();                                               \
    return Binary(c, DataType::kBool,                                            \
                  [](double x, double y) { return static_cast<double>(EXPR); }); \
  }
COMPARE(Equal, CompareTyped(c, CompareOp::kEqual), x == y)
COMPARE(Less, CompareTyped(c, CompareOp::kLess), x < y)
COMPARE(Greater, CompareTyped(c, CompareOp::kGreater), x > y)
COMPARE(LessOrEqual, CompareTyped(c, CompareOp::kLessOrEqual), x <= y)
COMPARE(GreaterOrEqual, CompareTyped(c, CompareOp::kGreaterOrEqual), x >= y)
COMPARE(And, LogicTyped(c, LogicOp::kAnd), (x != 0) && (y != 0))
COMPARE(Or, LogicTyped(c, LogicOp::kOr), (x != 0) || (y != 0))
COMPARE(Xor, LogicTyped(c, LogicOp::kXor), (x != 0) != (y != 0))

Status BitwiseAnd(KernelContext& c) {
  return BinaryBits(c, false, std::bit_and<uint64_t>());
}
Status BitwiseOr(KernelContext& c) {
  return BinaryBits(c, false, std::bit_or<uint64_t>());
}
Status BitwiseXor(KernelContext& c) {
  return BinaryBits(c, false, std::bit_xor<uint64_t>());
}
Status BitwiseNot(KernelContext& c) {
  const Tensor& x = c.in(0);
  if (!IsIntegerType(x.dtype())) return c.Error("the operand must be an integer");
  Tensor& y = c.Output(0, x.dtype(), x.shape());
  for (int64_t i = 0; i < x.elements(); ++i) WriteBits(y, i, ~ReadBits(x, i));
  return Status::Ok();
}

// Variadic broadcasting reductions over inputs: Sum, Mean, Max, Min.
Status Variadic(KernelContext& c, const std::function<double(double, double)>& f, bool mean) {
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < c.num_inputs(); ++i) shapes.push_back(c.in(i).shape());
  auto shape = BroadcastShape(shapes);
  if (!shape) return c.Error("shapes cannot be broadcast together");
  std::vector<std::vector<int64_t>> strides;
  for (const auto& s : shapes) strides.push_back(BroadcastStrides(s, *shape));
  Tensor& y = c.Output(0, c.in(0).dtype(), *shape);
  const auto k = static_cast<double>(c.num_inputs());
  ForEachBroadcast(*shape, strides, [&](int64_t i, const std::vector<int64_t>& o) {
    double acc = ElementAsDouble(c.in(0), o[0]);
    for (size_t j = 1; j < c.num_inputs(); ++j) acc = f(acc, ElementAsDouble(c.in(j), o[j]));
    SetElementFromDouble(y, i, mean ? acc / k : acc);
  });
  return Status::Ok();
}
Status Sum(KernelContext& c) {
  return Variadic(c, std::plus<double>(), false);
}
Status Mean(KernelContext& c) {
  return Variadic(c, std::plus<double>(), true);
}
Status Max(KernelContext& c) {
  return Variadic(
      c, [](double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); },
      false);
}
Status Min(KernelContext& c) {
  return Variadic(
      c, [](double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); },
      false);
}

// Where over 4-byte values: the broadcast walk per row of the last axis, the row a tight loop
// over its three strides (each 0 or 1 when an operand is broadcast or not).
void WhereRows4Bytes(const Tensor& cond, const Tensor& a, const Tensor& b,
                     const std::vector<int64_t>& shape,
                     const std::vector<std::vector<int64_t>>& strides, Tensor& y) {
  const bool* pc = cond.data<bool>();
  const auto* pa = static_cast<const uint32_t*>(a.raw());
  const auto* pb = static_cast<const uint32_t*>(b.raw());
  auto* py = static_cast<uint32_t*>(y.mutable_raw());
  ForEachBroadcastRow(
      shape, strides,
      [&](int64_t row, const std::vector<int64_t>& o, const std::vector<int64_t>& step, int64_t n) {
        const bool* rc = pc + o[0];
        const uint32_t* ra = pa + o[1];
        const uint32_t* rb = pb + o[2];
        uint32_t* ry = py + row * n;
        const int64_t sc = step[0], sa = step[1], sb = step[2];
        if (sc == 0) {  // one choice for the whole row (a mask over rows of a cache): a copy
          const uint32_t* from = rc[0] ? ra : rb;
          const int64_t sf = rc[0] ? sa : sb;
          if (sf == 0)  // steps along a row are 0 (broadcast) or 1
            std::fill_n(ry, n, from[0]);
          else
            std::memcpy(ry, from, static_cast<size_t>(n) * 4);
        } else if (sc == 1 && sa == 1 && sb == 1) {  // unit strides: the loop vectorises
          for (int64_t k = 0; k < n; ++k) ry[k] = rc[k] ? ra[k] : rb[k];
        } else if (sc == 1 && sa == 1 && sb == 0) {  // a row or a value (masked scores)
          const uint32_t v = rb[0];
          for (int64_t k = 0; k < n; ++k) ry[k] = rc[k] ? ra[k] : v;
        } else if (sc == 1 && sa == 0 && sb == 1) {
          const uint32_t v = ra[0];
          for (int64_t k = 0; k < n; ++k) ry[k] = rc[k] ? v : rb[k];
        } else {
          for (int64_t k = 0; k < n; ++k) ry[k] = rc[k * sc] ? ra[k * sa] : rb[k * sb];
        }
      });
}

Status Where(KernelContext& c) {
  const Tensor& cond = c.in(0);
  const Tensor& a = c.in(1);
  const Tensor& b = c.in(2);
  // Both sides are copied with X's element size, and the condition read as bool.
  if (cond.dtype() != DataType::kBool) return c.Error("the condition must be bool");
  if (a.dtype() != b.dtype()) return c.Error("X and Y must have one type");
  auto shape = BroadcastShape({cond.shape(), a.shape(), b.shape()});
  if (!shape) return c.Error("shapes cannot be broadcast together");
  Tensor& y = c.Output(0, a.dtype(), *shape);
  const std::vector<std::vector<int64_t>> strides = {BroadcastStrides(cond.shape(), *shape),
                                                     BroadcastStrides(a.shape(), *shape),
                                                     BroadcastStrides(b.shape(), *shape)};
  if (a.dtype() == DataType::kString) {
    ForEachBroadcast(*shape, strides, [&](int64_t i, const std::vector<int64_t>& o) {
      const bool pick = cond.data<bool>()[o[0]];
      y.mutable_strings()[i] = (pick ? a : b).strings()[pick ? o[1] : o[2]];
    });
    return Status::Ok();
  }
  const size_t es = ElementSize(a.dtype());
  if (es == 4 && !shape->empty()) {
    // 4-byte values (float, int32) row by row: the attention mask's and SDPA's guard's Where
    // run over every score.
    WhereRows4Bytes(cond, a, b, *shape, strides, y);
    return Status::Ok();
  }
  auto* out = static_cast<char*>(y.mutable_raw());
  ForEachBroadcast(*shape, strides, [&](int64_t i, const std::vector<int64_t>& o) {
    const bool pick = cond.data<bool>()[o[0]];
    const char* src =
        static_cast<const char*>(pick ? a.raw() : b.raw()) + (pick ? o[1] : o[2]) * es;
    std::memcpy(out + i * es, src, es);
  });
  return Status::Ok();
}

Status Clip(KernelContext& c) {
  double lo = -INFINITY, hi = INFINITY;
  if (c.op().version < 11) {
    lo = c.op().Float("min", -INFINITY);
    hi = c.op().Float("max", INFINITY);
  } else {
    if (c.has_input(1) && c.in(1).elements() == 1) lo = ElementAsDouble(c.in(1), 0);
    if (c.has_input(2) && c.in(2).elements() == 1) hi = ElementAsDouble(c.in(2), 0);
  }
  return Unary(
      c, [&](double v) { return std::min(hi, std::max(lo, v)); }, true);
}

Status CastTo(KernelContext& c, DataType to) {
  const Tensor& x = c.in(0);
  if (to == x.dtype()) {
    c.SetOutput(0, x);
    return Status::Ok();
  }
  Tensor& y = c.Output(0, to, x.shape());
  if (to == DataType::kString || x.dtype() == DataType::kString) {
    if (to == DataType::kString) {
      for (int64_t i = 0; i < x.elements(); ++i) {
        const double v = ElementAsDouble(x, i);
        // Shortest text that reads back to the same value, as NumPy prints float32.
        char buf[64];
        std::string text;
        if (std::isnan(v)) {
          text = "NaN";
        } else if (std::isinf(v)) {
          text = v > 0 ? "INF" : "-INF";
        } else {
          auto r = x.dtype() == DataType::kDouble
                       ? std::to_chars(buf, buf + sizeof buf, v)
                       : std::to_chars(buf, buf + sizeof buf, static_cast<float>(v));
          text.assign(buf, r.ptr);
        }
        y.mutable_strings()[i] = text;
      }
      return Status::Ok();
    }
    for (int64_t i = 0; i < x.elements(); ++i)
      SetElementFromDouble(y, i, std::strtod(x.strings()[i].c_str(), nullptr));
    return Status::Ok();
  }
  if (ElementSize(to) == 0) return c.Error("cast to " + DataTypeName(to) + " is not supported");
  if (CastTyped(x, to, &y)) return Status::Ok();
  if ((x.dtype() == DataType::kInt64 || x.dtype() == DataType::kUint64) && !IsFloatType(to)) {
    for (int64_t i = 0; i < x.elements(); ++i) {
      const int64_t v = x.data<int64_t>()[i];
      DispatchNumeric(
          to, [&](auto z) { y.mutable_data<decltype(z)>()[i] = static_cast<decltype(z)>(v); });
    }
    return Status::Ok();
  }
  for (int64_t i = 0; i < x.elements(); ++i) {
    double v = ElementAsDouble(x, i);
    if (to == DataType::kBool) v = v != 0;
    SetElementFromDouble(y, i, v);
  }
  return Status::Ok();
}
Status Cast(KernelContext& c) {
  return CastTo(c, static_cast<DataType>(c.op().Int("to", 0)));
}
Status CastLike(KernelContext& c) {
  return CastTo(c, c.in(1).dtype());
}

}  // namespace

void RegisterElementwiseKernels(KernelTable& t) {
  t["Exp"] = Exp;
  t["Log"] = Log;
  t["Sqrt"] = Sqrt;
  t["Reciprocal"] = Reciprocal;
  t["Sin"] = Sin;
  t["Cos"] = Cos;
  t["Tan"] = Tan;
  t["Asin"] = Asin;
  t["Acos"] = Acos;
  t["Atan"] = Atan;
  t["Sinh"] = Sinh;
  t["Cosh"] = Cosh;
  t["Asinh"] = Asinh;
  t["Acosh"] = Acosh;
  t["Atanh"] = Atanh;
  t["Tanh"] = Tanh;
  t["Sigmoid"] = SigmoidK;
  t["Erf"] = Erf;
  t["Floor"] = Floor;
  t["Ceil"] = Ceil;
  t["Round"] = Round;
  t["Softplus"] = Softplus;
  t["Softsign"] = Softsign;
  t["HardSigmoid"] = HardSigmoid;
  t["HardSwish"] = HardSwish;
  t["Elu"] = Elu;
  t["Selu"] = Selu;
  t["Celu"] = Celu;
  t["ThresholdedRelu"] = ThresholdedRelu;
  t["Mish"] = Mish;
  t["Gelu"] = Gelu;
  t["LeakyRelu"] = LeakyRelu;
  t["Relu"] = Relu;
  t["Abs"] = Abs;
  t["Neg"] = Neg;
  t["Sign"] = Sign;
  t["Identity"] = Identity;
  t["IsNaN"] = IsNaN;
  t["IsInf"] = IsInf;
  t["Not"] = Not;
  t["Add"] = Add;
  t["Sub"] = Sub;
  t["Mul"] = Mul;
  t["Div"] = Div;
  t["Pow"] = Pow;
  t["Mod"] = Mod;
  t["PRelu"] = PRelu;
  t["BitShift"] = BitShift;
  t["Equal"] = Equal;
  t["Less"] = Less;
  t["Greater"] = Greater;
  t["LessOrEqual"] = LessOrEqual;
  t["GreaterOrEqual"] = GreaterOrEqual;
  t["And"] = And;
  t["Or"] = Or;
  t["Xor"] = Xor;
  t["BitwiseAnd"] = BitwiseAnd;
  t["BitwiseOr"] = BitwiseOr;
  t["BitwiseXor"] = BitwiseXor;
  t["BitwiseNot"] = BitwiseNot;
  t["Sum"] = Sum;
  t["Mean"] = Mean;
  t["Max"] = Max;
  t["Min"] = Min;
  t["Where"] = Where;
  t["Clip"] = Clip;
  t["Cast"] = Cast;
  t["CastLike"] = CastLike;
}

}  // namespace ortc::exec
