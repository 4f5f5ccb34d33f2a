// Host evaluation of single ONNX ops on small constant tensors (shape arithmetic, layout ops
// on weights), with the CPU kernels (kernel_eval.h) for every other op. Shared by the
// graph-level shape folding and the per-group constant folding.
#include "graph/host_eval.h"

#include "base/element_types.h"
#include "base/shape_limit.h"
#include "base/shape_math.h"
#include "graph/kernel_eval.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <set>
#include <type_traits>
#include <utility>

namespace ortc::graph {
namespace {

using T = onnx::TensorProto;

int64_t Product(const std::vector<int64_t>& dims, size_t from = 0, size_t to = SIZE_MAX) {
  const auto first = dims.begin() + static_cast<std::ptrdiff_t>(std::min(from, dims.size()));
  const auto last = dims.begin() + static_cast<std::ptrdiff_t>(std::min(to, dims.size()));
  int64_t p = 1;
  for (auto it = first; it < last; ++it) p *= *it;
  return p;
}

size_t ElementSize(int32_t dtype) {
  const int64_t bits = ElementBits(dtype);
  return bits % 8 == 0 ? static_cast<size_t>(bits / 8) : 0;
}

// The bytes of a result of `dims` with `es`-byte elements; nullopt when a dim is negative or the
// result exceeds `limit` (checked without overflow, before anything is allocated).
std::optional<size_t> ResultBytes(const std::vector<int64_t>& dims, size_t es, int64_t limit) {
  // Also the runtime's bound on every shape, zero-element ones included, so that Product and
  // strides over any folded tensor's dims cannot overflow.
  if (es == 0 || !exec::ShapeWithinLimit(dims)) return std::nullopt;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
    if (d == 0) return 0;
  }
  int64_t bytes = static_cast<int64_t>(es);
  for (int64_t d : dims) {
    if (bytes > limit / d) return std::nullopt;
    bytes *= d;
  }
  if (bytes > limit) return std::nullopt;
  return static_cast<size_t>(bytes);
}

bool Normalise(int64_t& axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return false;
  if (axis < 0) axis += rank;
  return true;
}

template <typename V>
V Get(const HostTensor& t, int64_t i) {
  if constexpr (std::is_same_v<V, bool>) {
    // A byte other than 0 or 1 is no valid bool: read the byte, then compare.
    return t.bytes[static_cast<size_t>(i)] != 0;
  } else {
    V v;
    std::memcpy(&v, t.bytes.data() + i * sizeof(V), sizeof(V));
    return v;
  }
}

template <typename V>
void Put(HostTensor& t, int64_t i, V v) {
  std::memcpy(t.bytes.data() + i * sizeof(V), &v, sizeof(V));
}

std::optional<std::vector<int64_t>> IntValues(const HostTensor* t) {
  if (!t) return std::nullopt;
  std::vector<int64_t> out;
  for (int64_t i = 0; i < t->elements(); ++i) {
    if (t->dtype == T::INT64) {
      out.push_back(Get<int64_t>(*t, i));
    } else if (t->dtype == T::INT32) {
      out.push_back(Get<int32_t>(*t, i));
    } else {
      return std::nullopt;
    }
  }
  return out;
}

HostTensor Int64Tensor(std::vector<int64_t> values, std::vector<int64_t> dims) {
  HostTensor t{T::INT64, std::move(dims), std::string(values.size() * 8, '\0')};
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

// Calls f with a value of the C++ type of dtype, for the types folding computes on: float, double,
// int64, int32, int8, uint8 and bool, the ones shapes, indices and masks use. Others decline and
// the runtime computes them (uint16 would also promote to int, where uint16 * uint16 overflows).
template <typename F>
bool Dispatch(int32_t dtype, F&& f) {
  switch (dtype) {
    case T::FLOAT:
    case T::DOUBLE:
    case T::INT64:
    case T::INT32:
    case T::INT8:
    case T::UINT8:
    case T::BOOL:
      return VisitNumericType(dtype, std::forward<F>(f));
    default:
      return false;
  }
}

std::optional<std::vector<int64_t>> BroadcastDims(const std::vector<int64_t>& a,
                                                  const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// Index of `out_index` (in `out_dims`) in a broadcast input of `in_dims`.
int64_t BroadcastIndex(int64_t out_index, const std::vector<int64_t>& out_dims,
                       const std::vector<int64_t>& in_dims) {
  int64_t in_index = 0, in_stride = 1;
  for (size_t k = out_dims.size(); k-- > 0;) {
    const int64_t coord = out_index % out_dims[k];
    out_index /= out_dims[k];
    const size_t offset = out_dims.size() - in_dims.size();
    if (k >= offset) {
      const int64_t d = in_dims[k - offset];
      if (d != 1) in_index += coord * in_stride;
      in_stride *= d;
    }
  }
  return in_index;
}

// Calls f(out_index, a_index, b_index) for every element of the broadcast of a_dims and b_dims
// to out_dims, in row-major order. The input indices advance by strides (0 along a broadcast
// axis), with no division per element: folding a large weight's dequantization visits tens of
// millions of elements.
template <typename F>
void ForEachBroadcast(const std::vector<int64_t>& out_dims, const std::vector<int64_t>& a_dims,
                      const std::vector<int64_t>& b_dims, F&& f) {
  const size_t rank = out_dims.size();
  const int64_t total = Product(out_dims);
  if (total == 0) return;
  if (rank == 0) return f(int64_t{0}, int64_t{0}, int64_t{0});
  auto strides = [rank](const std::vector<int64_t>& in) {
    std::vector<int64_t> s(rank, 0);
    int64_t stride = 1;
    for (size_t k = in.size(); k-- > 0;) {
      s[k + rank - in.size()] = in[k] == 1 ? 0 : stride;
      stride *= in[k];
    }
    return s;
  };
  const std::vector<int64_t> sa = strides(a_dims), sb = strides(b_dims);
  const int64_t inner = out_dims[rank - 1], ia_step = sa[rank - 1], ib_step = sb[rank - 1];
  std::vector<int64_t> coord(rank, 0);
  int64_t ia = 0, ib = 0;
  for (int64_t i = 0; i < total; i += inner) {
    for (int64_t j = 0; j < inner; ++j) f(i + j, ia + j * ia_step, ib + j * ib_step);
    for (size_t k = rank - 1; k-- > 0;) {  // the next row: an odometer over the outer axes
      ia += sa[k];
      ib += sb[k];
      if (++coord[k] < out_dims[k]) break;
      ia -= sa[k] * out_dims[k];
      ib -= sb[k] * out_dims[k];
      coord[k] = 0;
    }
  }
}

enum class Arithmetic { kAdd, kSub, kMul, kDiv, kMod };

std::optional<Arithmetic> ArithmeticOf(std::string_view op) {
  if (op == "Add") return Arithmetic::kAdd;
  if (op == "Sub") return Arithmetic::kSub;
  if (op == "Mul") return Arithmetic::kMul;
  if (op == "Div") return Arithmetic::kDiv;
  if (op == "Mod") return Arithmetic::kMod;
  return std::nullopt;
}

// Add, Sub, Mul, Div and Mod with broadcasting. Mod follows its `fmod` attribute: for integers
// 0 takes the divisor's sign (Python's %), 1 the dividend's (C's fmod); floats require 1.
std::optional<HostTensor> Binary(std::string_view op_type, const HostTensor& a, const HostTensor& b,
                                 int64_t limit, bool fmod = false) {
  const auto op = ArithmeticOf(op_type);
  if (!op || a.dtype != b.dtype) return std::nullopt;
  auto dims = BroadcastDims(a.dims, b.dims);
  const auto bytes = dims ? ResultBytes(*dims, ElementSize(a.dtype), limit) : std::nullopt;
  if (!bytes) return std::nullopt;
  HostTensor out{a.dtype, *dims, std::string(*bytes, '\0')};
  bool ok = true;
  const bool dispatched = Dispatch(a.dtype, [&](auto zero) {
    using V = decltype(zero);
    if constexpr (std::is_same_v<V, bool>) {
      ok = false;
    } else {
      if (*op == Arithmetic::kMod && std::is_floating_point_v<V> && !fmod) {
        ok = false;  // the spec requires fmod=1 for floats
        return;
      }
      ForEachBroadcast(*dims, a.dims, b.dims, [&](int64_t i, int64_t ia, int64_t ib) {
        const V x = Get<V>(a, ia);
        const V y = Get<V>(b, ib);
        V r{};
        if constexpr (std::is_integral_v<V>) {
          // Integers wrap, as the runtime's kernels do: computed unsigned, since signed
          // overflow is undefined (and INT64_MIN / -1 traps).
          using U = std::make_unsigned_t<V>;
          const U ux = static_cast<U>(x), uy = static_cast<U>(y);
          switch (*op) {
            case Arithmetic::kAdd:
              r = static_cast<V>(static_cast<U>(ux + uy));
              break;
            case Arithmetic::kSub:
              r = static_cast<V>(static_cast<U>(ux - uy));
              break;
            case Arithmetic::kMul:
              r = static_cast<V>(static_cast<U>(ux * uy));
              break;
            case Arithmetic::kDiv:
            case Arithmetic::kMod:
              if (y == 0) {
                ok = false;
              } else if (std::is_signed_v<V> && y == static_cast<V>(-1)) {
                r = *op == Arithmetic::kDiv ? static_cast<V>(static_cast<U>(U{0} - ux)) : V{0};
              } else if (*op == Arithmetic::kDiv) {
                r = static_cast<V>(x / y);
              } else {
                r = static_cast<V>(x % y);
                if (!fmod && r != 0 && ((r < 0) != (y < 0))) r = static_cast<V>(r + y);
              }
              break;
          }
        } else {
          switch (*op) {
            case Arithmetic::kAdd:
              r = static_cast<V>(x + y);
              break;
            case Arithmetic::kSub:
              r = static_cast<V>(x - y);
              break;
            case Arithmetic::kMul:
              r = static_cast<V>(x * y);
              break;
            case Arithmetic::kDiv:
              r = static_cast<V>(x / y);
              break;
            case Arithmetic::kMod:
              r = static_cast<V>(std::fmod(x, y));
              break;
          }
        }
        Put<V>(out, i, r);
      });
    }
  });
  if (!dispatched || !ok) return std::nullopt;
  return out;
}

std::optional<HostTensor> Cast(const HostTensor& in, int32_t to, int64_t limit) {
  const auto bytes = ResultBytes(in.dims, ElementSize(to), limit);
  if (!bytes) return std::nullopt;
  const int64_t n = in.elements();
  HostTensor out{to, in.dims, std::string(*bytes, '\0')};
  bool inner_ok = false, in_range = true;
  const bool outer_ok = Dispatch(in.dtype, [&](auto src_zero) {
    using S = decltype(src_zero);
    inner_ok = Dispatch(to, [&](auto dst_zero) {
      using D = decltype(dst_zero);
      for (int64_t i = 0; i < n; ++i) {
        const S v = Get<S>(in, i);
        // A float outside the target integer range has no defined conversion: do not fold.
        if constexpr (std::is_floating_point_v<S> && std::is_integral_v<D> &&
                      !std::is_same_v<D, bool>) {
          if (!(v >= static_cast<S>(std::numeric_limits<D>::min()) &&
                v < static_cast<S>(std::numeric_limits<D>::max()) + S{1})) {
            in_range = false;
            return;
          }
        }
        Put<D>(out, i, static_cast<D>(v));
      }
    });
  });
  if (!outer_ok || !inner_ok || !in_range) return std::nullopt;
  return out;
}

std::optional<HostTensor> Transpose(const HostTensor& in, std::vector<int64_t> perm) {
  const size_t rank = in.dims.size();
  if (perm.empty()) {
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
  }
  if (perm.size() != rank) return std::nullopt;
  const size_t es = ElementSize(in.dtype);
  if (es == 0) return std::nullopt;
  std::vector<int64_t> out_dims(rank), in_strides(rank, 1);
  for (size_t i = rank; i-- > 1;) in_strides[i - 1] = in_strides[i] * in.dims[i];
  std::vector<bool> taken(rank, false);
  for (size_t i = 0; i < rank; ++i) {
    // A repeated axis would read past the input.
    if (perm[i] < 0 || perm[i] >= static_cast<int64_t>(rank) || taken[perm[i]]) return std::nullopt;
    taken[perm[i]] = true;
    out_dims[i] = in.dims[perm[i]];
  }
  HostTensor out{in.dtype, out_dims, std::string(in.bytes.size(), '\0')};
  const int64_t n = in.elements();
  std::vector<int64_t> coord(rank, 0);
  for (int64_t o = 0; o < n; ++o) {
    int64_t src = 0;
    for (size_t i = 0; i < rank; ++i) src += coord[i] * in_strides[perm[i]];
    std::memcpy(out.bytes.data() + o * es, in.bytes.data() + src * es, es);
    for (size_t i = rank; i-- > 0;) {
      if (++coord[i] < out_dims[i]) break;
      coord[i] = 0;
    }
  }
  return out;
}

std::optional<HostTensor> Concat(const std::vector<const HostTensor*>& ins, int64_t axis,
                                 int64_t limit) {
  if (ins.empty() || !ins[0]) return std::nullopt;
  const auto& first = *ins[0];
  if (!Normalise(axis, static_cast<int64_t>(first.dims.size()))) return std::nullopt;
  std::vector<int64_t> dims = first.dims;
  dims[axis] = 0;
  for (const auto* t : ins) {
    if (!t || t->dtype != first.dtype || t->dims.size() != first.dims.size()) return std::nullopt;
    for (size_t i = 0; i < dims.size(); ++i) {
      if (static_cast<int64_t>(i) != axis && t->dims[i] != first.dims[i]) return std::nullopt;
    }
    dims[axis] += t->dims[axis];
  }
  const size_t es = ElementSize(first.dtype);
  const auto bytes = ResultBytes(dims, es, limit);
  if (!bytes) return std::nullopt;
  HostTensor out{first.dtype, dims, ""};
  if (*bytes == 0) return out;  // an outer size of 2^40 over empty chunks would loop that often
  const int64_t outer = Product(dims, 0, axis), inner = Product(dims, axis + 1);
  out.bytes.reserve(*bytes);
  for (int64_t o = 0; o < outer; ++o) {
    for (const auto* t : ins) {
      const int64_t chunk = t->dims[axis] * inner * static_cast<int64_t>(es);
      out.bytes.append(t->bytes, o * chunk, chunk);
    }
  }
  return out;
}

std::optional<HostTensor> Gather(const HostTensor& data, const HostTensor& indices, int64_t axis,
                                 int64_t limit) {
  const auto rank = static_cast<int64_t>(data.dims.size());
  if (!Normalise(axis, rank)) return std::nullopt;
  auto idx = IntValues(&indices);
  if (!idx) return std::nullopt;
  const size_t es = ElementSize(data.dtype);
  if (es == 0) return std::nullopt;
  std::vector<int64_t> dims(data.dims.begin(), data.dims.begin() + axis);
  dims.insert(dims.end(), indices.dims.begin(), indices.dims.end());
  dims.insert(dims.end(), data.dims.begin() + axis + 1, data.dims.end());
  const auto bytes = ResultBytes(dims, es, limit);  // repeated indices can grow the data
  if (!bytes) return std::nullopt;
  const int64_t outer = Product(data.dims, 0, axis), inner = Product(data.dims, axis + 1) * es;
  const int64_t axis_dim = data.dims[axis];
  for (int64_t& k : *idx) {  // checked once, not once per outer index
    if (k < -axis_dim || k >= axis_dim) return std::nullopt;
    if (k < 0) k += axis_dim;
  }
  HostTensor out{data.dtype, dims, ""};
  if (*bytes == 0) return out;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k : *idx) {
      out.bytes.append(data.bytes, (o * axis_dim + k) * inner, inner);
    }
  }
  return out;
}

std::optional<HostTensor> Slice(const HostTensor& data, std::vector<int64_t> starts,
                                std::vector<int64_t> ends, std::vector<int64_t> axes,
                                std::vector<int64_t> steps) {
  const auto rank = static_cast<int64_t>(data.dims.size());
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (starts.size() != ends.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return std::nullopt;
  std::vector<int64_t> begin(rank, 0), step(rank, 1), count(data.dims);
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t a = axes[k];
    if (!Normalise(a, rank) || steps[k] == 0) return std::nullopt;
    const exec::SliceAxis r = exec::ResolveSliceAxis(data.dims[a], starts[k], ends[k], steps[k]);
    begin[a] = r.begin;
    step[a] = r.step;
    count[a] = r.count;
  }
  const size_t es = ElementSize(data.dtype);
  if (es == 0) return std::nullopt;
  HostTensor out{data.dtype, count, std::string(Product(count) * es, '\0')};
  std::vector<int64_t> strides(rank, 1), coord(rank, 0);
  for (int64_t i = rank - 1; i > 0; --i) strides[i - 1] = strides[i] * data.dims[i];
  for (int64_t o = 0; o < out.elements(); ++o) {
    int64_t src = 0;
    for (int64_t i = 0; i < rank; ++i) src += (begin[i] + coord[i] * step[i]) * strides[i];
    std::memcpy(out.bytes.data() + o * es, data.bytes.data() + src * es, es);
    for (int64_t i = rank; i-- > 0;) {
      if (++coord[i] < count[i]) break;
      coord[i] = 0;
    }
  }
  return out;
}

std::optional<std::vector<int64_t>> AxesFrom(const HostOp& op,
                                             const std::vector<const HostTensor*>& in, int since) {
  if (op.since_version >= since)
    return in.size() > 1 && in[1] ? IntValues(in[1]) : std::vector<int64_t>{};
  const auto* a = op.Attr("axes");
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>{};
}

// Equal, Less, Greater: broadcast comparison to a bool tensor.
std::optional<HostTensor> Compare(std::string_view op, const HostTensor& a, const HostTensor& b,
                                  int64_t limit) {
  if (a.dtype != b.dtype) return std::nullopt;
  auto dims = BroadcastDims(a.dims, b.dims);
  if (!dims || !ResultBytes(*dims, 1, limit)) return std::nullopt;
  const int64_t n = Product(*dims);
  HostTensor out{T::BOOL, *dims, std::string(n, '\0')};
  const bool dispatched = Dispatch(a.dtype, [&](auto zero) {
    using V = decltype(zero);
    const int kind = op == "Equal" ? 0 : op == "Less" ? 1 : 2;
    ForEachBroadcast(*dims, a.dims, b.dims, [&](int64_t i, int64_t ia, int64_t ib) {
      const V x = Get<V>(a, ia);
      const V y = Get<V>(b, ib);
      Put<bool>(out, i, kind == 0 ? x == y : kind == 1 ? x < y : x > y);
    });
  });
  if (!dispatched) return std::nullopt;
  return out;
}

std::optional<HostTensor> Where(const HostTensor& c, const HostTensor& x, const HostTensor& y,
                                int64_t limit) {
  if (c.dtype != T::BOOL || x.dtype != y.dtype) return std::nullopt;
  auto xy = BroadcastDims(x.dims, y.dims);
  auto dims = xy ? BroadcastDims(c.dims, *xy) : std::nullopt;
  const size_t es = ElementSize(x.dtype);
  if (!dims || !ResultBytes(*dims, es, limit)) return std::nullopt;
  const int64_t n = Product(*dims);
  HostTensor out{x.dtype, *dims, std::string(n * es, '\0')};
  for (int64_t i = 0; i < n; ++i) {
    const bool pick_x = Get<bool>(c, BroadcastIndex(i, *dims, c.dims));
    const HostTensor& src = pick_x ? x : y;
    std::memcpy(out.bytes.data() + i * es,
                src.bytes.data() + BroadcastIndex(i, *dims, src.dims) * es, es);
  }
  return out;
}

// Expand: bidirectional broadcast of `in` with the target shape.
std::optional<HostTensor> Expand(const HostTensor& in, const std::vector<int64_t>& shape,
                                 int64_t limit) {
  for (int64_t d : shape) {
    if (d < 0) return std::nullopt;
  }
  auto dims = BroadcastDims(in.dims, shape);
  const size_t es = ElementSize(in.dtype);
  if (!dims || !ResultBytes(*dims, es, limit)) return std::nullopt;
  const int64_t n = Product(*dims);
  HostTensor out{in.dtype, *dims, std::string(n * es, '\0')};
  ForEachBroadcast(*dims, in.dims, in.dims, [&](int64_t i, int64_t from, int64_t) {
    std::memcpy(out.bytes.data() + i * es, in.bytes.data() + from * es, es);
  });
  return out;
}

// Range over scalar start, limit and delta of one numeric type; a huge count declines.
std::optional<HostTensor> Range(const HostTensor& start, const HostTensor& limit,
                                const HostTensor& delta, int64_t max_bytes) {
  if (start.dtype != limit.dtype || start.dtype != delta.dtype) return std::nullopt;
  if (start.elements() != 1 || limit.elements() != 1 || delta.elements() != 1) return std::nullopt;
  std::optional<HostTensor> out;
  Dispatch(start.dtype, [&](auto zero) {
    using V = decltype(zero);
    if constexpr (!std::is_same_v<V, bool>) {
      const V s = Get<V>(start, 0), l = Get<V>(limit, 0), d = Get<V>(delta, 0);
      if (d == 0) return;
      const double count =
          std::ceil((static_cast<double>(l) - static_cast<double>(s)) / static_cast<double>(d));
      if (!(count < double{1 << 24})) return;  // also rejects NaN
      // Clamped in double: converting a large negative count is undefined.
      const auto n = static_cast<int64_t>(std::max(0.0, count));
      if (!ResultBytes({n}, sizeof(V), max_bytes)) return;
      HostTensor r{start.dtype, {n}, std::string(n * sizeof(V), '\0')};
      for (int64_t i = 0; i < n; ++i) {
        if constexpr (std::is_integral_v<V>) {
          // i * d may overflow even when every element fits (INT64_MIN to INT64_MAX by 2^62).
          using U = std::make_unsigned_t<V>;
          Put<V>(r, i,
                 static_cast<V>(static_cast<U>(
                     static_cast<U>(s) + static_cast<U>(static_cast<U>(i) * static_cast<U>(d)))));
        } else {
          Put<V>(r, i, static_cast<V>(s + static_cast<V>(i) * d));
        }
      }
      out = std::move(r);
    }
  });
  return out;
}

std::optional<HostTensor> Rounding(std::string_view op, const HostTensor& in) {
  std::optional<HostTensor> out;
  Dispatch(in.dtype, [&](auto zero) {
    using V = decltype(zero);
    if constexpr (std::is_floating_point_v<V>) {
      HostTensor r = in;
      for (int64_t i = 0; i < in.elements(); ++i) {
        const V v = Get<V>(in, i);
        Put<V>(r, i, op == "Floor" ? std::floor(v) : op == "Ceil" ? std::ceil(v) : std::sqrt(v));
      }
      out = std::move(r);
    }
  });
  return out;
}

// Pow with a floating-point base; the exponent may be any numeric type (T1 in ONNX), broadcast.
// Exporters write x ** 0.5 on a folded size (attention's scale) and x ** 3 in GELU.
std::optional<HostTensor> Pow(const HostTensor& base, const HostTensor& exponent, int64_t limit) {
  auto dims = BroadcastDims(base.dims, exponent.dims);
  if (!dims || !ResultBytes(*dims, ElementSize(base.dtype), limit)) return std::nullopt;
  std::vector<double> e(static_cast<size_t>(exponent.elements()));
  const bool read = Dispatch(exponent.dtype, [&](auto zero) {
    using E = decltype(zero);
    for (int64_t i = 0; i < exponent.elements(); ++i)
      e[i] = static_cast<double>(Get<E>(exponent, i));
  });
  if (!read) return std::nullopt;
  std::optional<HostTensor> out;
  Dispatch(base.dtype, [&](auto zero) {
    using V = decltype(zero);
    if constexpr (std::is_floating_point_v<V>) {
      HostTensor r{base.dtype, *dims, std::string(Product(*dims) * sizeof(V), '\0')};
      for (int64_t i = 0; i < Product(*dims); ++i) {
        const V x = Get<V>(base, BroadcastIndex(i, *dims, base.dims));
        Put<V>(r, i,
               static_cast<V>(
                   std::pow(x, static_cast<V>(e[BroadcastIndex(i, *dims, exponent.dims)]))));
      }
      out = std::move(r);
    }
  });
  return out;
}

// Trilu: keeps the upper (j - i >= k) or lower (j - i <= k) triangle of each trailing matrix.
std::optional<HostTensor> Trilu(const HostTensor& in, bool upper, int64_t k) {
  const size_t rank = in.dims.size();
  const size_t es = ElementSize(in.dtype);
  if (rank < 2 || es == 0) return std::nullopt;
  const int64_t rows = in.dims[rank - 2], cols = in.dims[rank - 1];
  HostTensor out{in.dtype, in.dims, std::string(in.bytes.size(), '\0')};
  const int64_t n = in.elements();
  for (int64_t e = 0; e < n; ++e) {
    const int64_t i = (e / cols) % rows, j = e % cols;
    if (upper ? j - i >= k : j - i <= k)
      std::memcpy(out.bytes.data() + e * es, in.bytes.data() + e * es, es);
  }
  return out;
}

std::vector<int64_t> IntsAttr(const HostOp& op, std::string_view name) {
  const auto* a = op.Attr(name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>{};
}

const std::set<std::string_view, std::less<>>& CoveredOps() {
  static const std::set<std::string_view, std::less<>> ops = {
      "Shape",   "Size",      "Identity",        "Add",    "Sub",     "Mul",     "Div",
      "Cast",    "Transpose", "Concat",          "Gather", "Reshape", "Flatten", "Unsqueeze",
      "Squeeze", "Slice",     "ConstantOfShape", "Equal",  "Less",    "Greater", "Where",
      "Expand",  "Range",     "Floor",           "Ceil",   "Trilu",   "Sqrt",    "Pow",
      "Mod"};
  return ops;
}

}  // namespace

const onnx::AttributeProto* HostOp::Attr(std::string_view name) const {
  for (const auto* a : attributes) {
    if (a->name() == name) return a;
  }
  return nullptr;
}

int64_t HostOp::IntAttr(std::string_view name, int64_t fallback) const {
  const auto* a = Attr(name);
  return a ? a->i() : fallback;
}

bool HostEvaluable(std::string_view op_type) {
  return CoveredOps().count(op_type) > 0 || KernelFoldable(op_type);
}

int64_t HostTensor::elements() const {
  return Product(dims);
}

namespace {

// The ops host_eval implements itself (shape arithmetic, with its own bounds on hostile values).
std::optional<std::vector<HostTensor>> EvaluateCovered(const HostOp& op,
                                                       const std::vector<const HostTensor*>& in,
                                                       const std::vector<TensorInfo>& infos) {
  if (!op.domain.empty()) return std::nullopt;
  const std::string_view t = op.op_type;
  auto one = [](std::optional<HostTensor> r) -> std::optional<std::vector<HostTensor>> {
    if (!r) return std::nullopt;
    return std::vector<HostTensor>{std::move(*r)};
  };
  if (t == "Shape") {  // needs only the input's static shape
    if (infos.empty() || !infos[0].shape.is_static()) return std::nullopt;
    std::vector<int64_t> dims;
    for (const auto& d : infos[0].shape.dims) dims.push_back(d.value);
    const auto rank = static_cast<int64_t>(dims.size());
    int64_t start = op.IntAttr("start", 0), end = op.IntAttr("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, start, rank);
    std::vector<int64_t> v(dims.begin() + start, dims.begin() + end);
    const auto n = static_cast<int64_t>(v.size());
    return std::vector<HostTensor>{Int64Tensor(std::move(v), {n})};
  }
  if (t == "Size") {
    if (infos.empty() || !infos[0].shape.is_static()) return std::nullopt;
    int64_t n = 1;
    for (const auto& d : infos[0].shape.dims) {
      if (d.value == 0) return std::vector<HostTensor>{Int64Tensor({0}, {})};
      if (n > std::numeric_limits<int64_t>::max() / d.value) return std::nullopt;  // overflow
      n *= d.value;
    }
    return std::vector<HostTensor>{Int64Tensor({n}, {})};
  }
  for (const auto* x : in) {
    if (!x) return std::nullopt;  // omitted optional inputs: not covered
  }
  if (in.empty()) return std::nullopt;
  const HostTensor& x = *in[0];
  if (t == "Identity") return one(x);
  if (t == "Add" || t == "Sub" || t == "Mul" || t == "Div" || t == "Mod") {
    return in.size() == 2
               ? one(Binary(t, x, *in[1], op.max_output_bytes, op.IntAttr("fmod", 0) == 1))
               : std::nullopt;
  }
  if (t == "Cast")
    return one(Cast(x, static_cast<int32_t>(op.IntAttr("to", 0)), op.max_output_bytes));
  if (t == "Transpose") {
    const auto* p = op.Attr("perm");
    return one(Transpose(
        x, p ? std::vector<int64_t>(p->ints().begin(), p->ints().end()) : std::vector<int64_t>{}));
  }
  if (t == "Concat") return one(Concat(in, op.IntAttr("axis", 0), op.max_output_bytes));
  if (t == "Gather")
    return in.size() == 2 ? one(Gather(x, *in[1], op.IntAttr("axis", 0), op.max_output_bytes))
                          : std::nullopt;
  if (t == "Reshape") {
    auto shape = in.size() == 2 ? IntValues(in[1]) : std::nullopt;
    if (!shape) return std::nullopt;
    const bool allowzero = op.IntAttr("allowzero", 0) != 0;
    int64_t known = 1, infer = -1;
    for (size_t i = 0; i < shape->size(); ++i) {
      int64_t& d = (*shape)[i];
      if (d == 0 && !allowzero) {
        if (i >= x.dims.size()) return std::nullopt;
        d = x.dims[i];
      }
      if (d == -1) {
        if (infer >= 0) return std::nullopt;
        infer = static_cast<int64_t>(i);
      } else if (d < 0) {
        return std::nullopt;
      } else {
        if (d > 0 && known > std::numeric_limits<int64_t>::max() / d) return std::nullopt;
        known *= d;
      }
    }
    if (infer >= 0) {
      if (known == 0 || x.elements() % known != 0) return std::nullopt;
      (*shape)[infer] = x.elements() / known;
    }
    const auto bytes = ResultBytes(*shape, 1, std::numeric_limits<int64_t>::max());
    if (!bytes || static_cast<int64_t>(*bytes) != x.elements()) return std::nullopt;
    return one(HostTensor{x.dtype, *shape, x.bytes});
  }
  if (t == "Flatten") {
    int64_t axis = op.IntAttr("axis", 1);
    const auto rank = static_cast<int64_t>(x.dims.size());
    if (axis < 0) axis += rank;
    if (axis < 0 || axis > rank) return std::nullopt;
    return one(HostTensor{x.dtype, {Product(x.dims, 0, axis), Product(x.dims, axis)}, x.bytes});
  }
  if (t == "Unsqueeze") {
    auto axes = AxesFrom(op, in, 13);
    if (!axes) return std::nullopt;
    const auto rank = static_cast<int64_t>(x.dims.size() + axes->size());
    std::vector<int64_t> dims;
    std::vector<bool> inserted(rank, false);
    for (int64_t a : *axes) {
      if (!Normalise(a, rank) || inserted[a]) return std::nullopt;
      inserted[a] = true;
    }
    size_t k = 0;
    for (int64_t i = 0; i < rank; ++i) dims.push_back(inserted[i] ? 1 : x.dims[k++]);
    return one(HostTensor{x.dtype, dims, x.bytes});
  }
  if (t == "Squeeze") {
    auto axes = AxesFrom(op, in, 13);
    if (!axes) return std::nullopt;
    const auto rank = static_cast<int64_t>(x.dims.size());
    std::vector<bool> drop(rank, false);
    if (axes->empty()) {
      for (int64_t i = 0; i < rank; ++i) drop[i] = x.dims[i] == 1;
    }
    for (int64_t a : *axes) {
      if (!Normalise(a, rank) || x.dims[a] != 1) return std::nullopt;
      drop[a] = true;
    }
    std::vector<int64_t> dims;
    for (int64_t i = 0; i < rank; ++i) {
      if (!drop[i]) dims.push_back(x.dims[i]);
    }
    return one(HostTensor{x.dtype, dims, x.bytes});
  }
  if (t == "Slice" && op.since_version >= 10) {
    auto starts = IntValues(in.size() > 1 ? in[1] : nullptr),
         ends = IntValues(in.size() > 2 ? in[2] : nullptr);
    auto axes = in.size() > 3 ? IntValues(in[3]) : std::vector<int64_t>{};
    auto steps = in.size() > 4 ? IntValues(in[4]) : std::vector<int64_t>{};
    if (!starts || !ends || !axes || !steps) return std::nullopt;
    return one(Slice(x, *starts, *ends, *axes, *steps));
  }
  if (t == "Slice" && op.since_version < 10 && in.size() == 1) {
    return one(Slice(x, IntsAttr(op, "starts"), IntsAttr(op, "ends"), IntsAttr(op, "axes"), {}));
  }
  if (t == "Equal" || t == "Less" || t == "Greater")
    return in.size() == 2 ? one(Compare(t, x, *in[1], op.max_output_bytes)) : std::nullopt;
  if (t == "Where")
    return in.size() == 3 ? one(Where(x, *in[1], *in[2], op.max_output_bytes)) : std::nullopt;
  if (t == "Expand") {
    auto shape = in.size() == 2 ? IntValues(in[1]) : std::nullopt;
    return shape ? one(Expand(x, *shape, op.max_output_bytes)) : std::nullopt;
  }
  if (t == "Range")
    return in.size() == 3 ? one(Range(x, *in[1], *in[2], op.max_output_bytes)) : std::nullopt;
  if (t == "Floor" || t == "Ceil" || t == "Sqrt") return one(Rounding(t, x));
  if (t == "Pow") return in.size() == 2 ? one(Pow(x, *in[1], op.max_output_bytes)) : std::nullopt;
  if (t == "Trilu") {
    std::optional<std::vector<int64_t>> k =
        in.size() > 1 ? IntValues(in[1]) : std::vector<int64_t>{0};
    if (!k || k->size() != 1) return std::nullopt;
    return one(Trilu(x, op.IntAttr("upper", 1) != 0, (*k)[0]));
  }
  if (t == "ConstantOfShape") {
    auto shape = IntValues(&x);
    if (!shape) return std::nullopt;
    for (int64_t d : *shape) {
      if (d < 0) return std::nullopt;
    }
    HostTensor fill{T::FLOAT, {}, std::string(4, '\0')};
    if (const auto* v = op.Attr("value"); v && v->has_t()) {
      const auto& vt = v->t();
      fill.dtype = vt.data_type();
      const size_t es = ElementSize(fill.dtype);
      if (es == 0) return std::nullopt;
      auto raw = [&](auto value) {
        fill.bytes.assign(reinterpret_cast<const char*>(&value), sizeof value);
      };
      if (vt.has_raw_data() && vt.raw_data().size() == es) {
        fill.bytes = vt.raw_data();
      } else if (vt.float_data_size() == 1 && fill.dtype == T::FLOAT) {
        raw(vt.float_data(0));
      } else if (vt.int64_data_size() == 1 && fill.dtype == T::INT64) {
        raw(vt.int64_data(0));
      } else if (vt.int32_data_size() == 1 && fill.dtype == T::INT32) {
        raw(vt.int32_data(0));
      } else {
        return std::nullopt;
      }
    }
    const auto bytes = ResultBytes(*shape, fill.bytes.size(), op.max_output_bytes);
    if (!bytes) return std::nullopt;
    HostTensor out{fill.dtype, *shape, ""};
    const int64_t n = out.elements();
    out.bytes.reserve(*bytes);
    for (int64_t i = 0; i < n; ++i) out.bytes += fill.bytes;
    return one(std::move(out));
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::vector<HostTensor>> EvaluateHostOp(const HostOp& op,
                                                      const std::vector<const HostTensor*>& in,
                                                      const std::vector<TensorInfo>& infos) {
  if (CoveredOps().count(op.op_type)) {
    if (auto r = EvaluateCovered(op, in, infos)) return r;
    // Shape and Size read only the static shape: no kernel can do better with null inputs.
    if (op.op_type == "Shape" || op.op_type == "Size") return std::nullopt;
  }
  // Every other op: the CPU kernel (a null input is an omitted optional one).
  return EvaluateWithCpuKernel(op, in);
}

}  // namespace ortc::graph
