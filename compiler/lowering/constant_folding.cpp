// Host evaluation of the ops constant folding covers. Semantics follow the ONNX operator spec;
// anything unusual (unsupported dtype, out-of-range index, division by zero) declines to fold.
#include "lowering/constant_folding.h"

#include <onnx/onnx_pb.h>

#include <cstring>
#include <functional>
#include <numeric>

namespace ortc::lowering {
namespace {

using T = onnx::TensorProto;

int64_t Product(const std::vector<int64_t>& dims, size_t from = 0, size_t to = SIZE_MAX) {
  int64_t p = 1;
  for (size_t i = from; i < std::min(to, dims.size()); ++i) p *= dims[i];
  return p;
}

size_t ElementSize(int32_t dtype) {
  const int64_t bits = graph::DataTypeBits(dtype);
  return bits % 8 == 0 ? static_cast<size_t>(bits / 8) : 0;
}

bool Normalise(int64_t& axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return false;
  if (axis < 0) axis += rank;
  return true;
}

template <typename V>
V Get(const HostTensor& t, int64_t i) {
  V v;
  std::memcpy(&v, t.bytes.data() + i * sizeof(V), sizeof(V));
  return v;
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

// Calls f with a value of the C++ type matching dtype.
template <typename F>
bool Dispatch(int32_t dtype, F&& f) {
  switch (dtype) {
    case T::FLOAT:
      f(float{});
      return true;
    case T::DOUBLE:
      f(double{});
      return true;
    case T::INT64:
      f(int64_t{});
      return true;
    case T::INT32:
      f(int32_t{});
      return true;
    case T::INT8:
      f(int8_t{});
      return true;
    case T::UINT8:
      f(uint8_t{});
      return true;
    case T::BOOL:
      f(bool{});
      return true;
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

std::optional<HostTensor> Binary(const std::string& op, const HostTensor& a, const HostTensor& b) {
  if (a.dtype != b.dtype) return std::nullopt;
  auto dims = BroadcastDims(a.dims, b.dims);
  if (!dims) return std::nullopt;
  HostTensor out{a.dtype, *dims, std::string(Product(*dims) * ElementSize(a.dtype), '\0')};
  bool ok = true;
  const bool dispatched = Dispatch(a.dtype, [&](auto zero) {
    using V = decltype(zero);
    if constexpr (std::is_same_v<V, bool>) {
      ok = false;
    } else {
      for (int64_t i = 0; i < Product(*dims) && ok; ++i) {
        const V x = Get<V>(a, BroadcastIndex(i, *dims, a.dims));
        const V y = Get<V>(b, BroadcastIndex(i, *dims, b.dims));
        V r{};
        if (op == "Add") r = static_cast<V>(x + y);
        if (op == "Sub") r = static_cast<V>(x - y);
        if (op == "Mul") r = static_cast<V>(x * y);
        if (op == "Div") {
          if constexpr (std::is_integral_v<V>) {
            if (y == 0) ok = false;
          }
          if (ok) r = static_cast<V>(x / y);
        }
        Put<V>(out, i, r);
      }
    }
  });
  if (!dispatched || !ok) return std::nullopt;
  return out;
}

std::optional<HostTensor> Cast(const HostTensor& in, int32_t to) {
  const size_t out_size = ElementSize(to);
  if (out_size == 0) return std::nullopt;
  HostTensor out{to, in.dims, std::string(in.elements() * out_size, '\0')};
  bool inner_ok = false;
  const bool outer_ok = Dispatch(in.dtype, [&](auto src_zero) {
    using S = decltype(src_zero);
    inner_ok = Dispatch(to, [&](auto dst_zero) {
      using D = decltype(dst_zero);
      for (int64_t i = 0; i < in.elements(); ++i) Put<D>(out, i, static_cast<D>(Get<S>(in, i)));
    });
  });
  if (!outer_ok || !inner_ok) return std::nullopt;
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
  for (size_t i = 0; i < rank; ++i) {
    if (perm[i] < 0 || perm[i] >= static_cast<int64_t>(rank)) return std::nullopt;
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

std::optional<HostTensor> Concat(const std::vector<const HostTensor*>& ins, int64_t axis) {
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
  if (es == 0) return std::nullopt;
  const int64_t outer = Product(dims, 0, axis), inner = Product(dims, axis + 1);
  HostTensor out{first.dtype, dims, ""};
  for (int64_t o = 0; o < outer; ++o) {
    for (const auto* t : ins) {
      const int64_t chunk = t->dims[axis] * inner * static_cast<int64_t>(es);
      out.bytes.append(t->bytes, o * chunk, chunk);
    }
  }
  return out;
}

std::optional<HostTensor> Gather(const HostTensor& data, const HostTensor& indices, int64_t axis) {
  const auto rank = static_cast<int64_t>(data.dims.size());
  if (!Normalise(axis, rank)) return std::nullopt;
  auto idx = IntValues(&indices);
  if (!idx) return std::nullopt;
  const size_t es = ElementSize(data.dtype);
  if (es == 0) return std::nullopt;
  std::vector<int64_t> dims(data.dims.begin(), data.dims.begin() + axis);
  dims.insert(dims.end(), indices.dims.begin(), indices.dims.end());
  dims.insert(dims.end(), data.dims.begin() + axis + 1, data.dims.end());
  const int64_t outer = Product(data.dims, 0, axis), inner = Product(data.dims, axis + 1) * es;
  const int64_t axis_dim = data.dims[axis];
  HostTensor out{data.dtype, dims, ""};
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k : *idx) {
      if (k < -axis_dim || k >= axis_dim) return std::nullopt;
      if (k < 0) k += axis_dim;
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
    const int64_t d = data.dims[a];
    auto clamp = [&](int64_t v, int64_t lo, int64_t hi) { return std::max(lo, std::min(hi, v)); };
    int64_t s = starts[k] < 0 ? starts[k] + d : starts[k];
    int64_t e = ends[k] < 0 ? ends[k] + d : ends[k];
    if (steps[k] > 0) {
      s = clamp(s, 0, d);
      e = clamp(e, 0, d);
      count[a] = std::max<int64_t>(0, (e - s + steps[k] - 1) / steps[k]);
    } else {
      s = clamp(s, 0, d - 1);
      e = clamp(e, -1, d - 1);
      count[a] = std::max<int64_t>(0, (s - e + (-steps[k]) - 1) / (-steps[k]));
    }
    begin[a] = s;
    step[a] = steps[k];
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

std::optional<std::vector<int64_t>> AxesFrom(const IrOp& op,
                                             const std::vector<const HostTensor*>& in, int since) {
  if (op.since_version >= since)
    return in.size() > 1 && in[1] ? IntValues(in[1]) : std::vector<int64_t>{};
  const auto* a = op.Attr("axes");
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>{};
}

}  // namespace

int64_t HostTensor::elements() const {
  return Product(dims);
}

std::optional<std::vector<HostTensor>> EvaluateOp(const IrOp& op,
                                                  const std::vector<const HostTensor*>& in,
                                                  const std::vector<graph::TensorInfo>& infos) {
  if (!op.domain.empty()) return std::nullopt;
  const std::string& t = op.op_type;
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
  for (const auto* x : in) {
    if (!x) return std::nullopt;  // omitted optional inputs: not covered
  }
  if (in.empty()) return std::nullopt;
  const HostTensor& x = *in[0];
  if (t == "Identity") return one(x);
  if (t == "Add" || t == "Sub" || t == "Mul" || t == "Div") {
    return in.size() == 2 ? one(Binary(t, x, *in[1])) : std::nullopt;
  }
  if (t == "Cast") return one(Cast(x, static_cast<int32_t>(op.IntAttr("to", 0))));
  if (t == "Transpose") {
    const auto* p = op.Attr("perm");
    return one(Transpose(
        x, p ? std::vector<int64_t>(p->ints().begin(), p->ints().end()) : std::vector<int64_t>{}));
  }
  if (t == "Concat") return one(Concat(in, op.IntAttr("axis", 0)));
  if (t == "Gather")
    return in.size() == 2 ? one(Gather(x, *in[1], op.IntAttr("axis", 0))) : std::nullopt;
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
        known *= d;
      }
    }
    if (infer >= 0) {
      if (known == 0 || x.elements() % known != 0) return std::nullopt;
      (*shape)[infer] = x.elements() / known;
    }
    if (Product(*shape) != x.elements()) return std::nullopt;
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
    HostTensor out{fill.dtype, *shape, ""};
    const int64_t n = out.elements();
    out.bytes.reserve(n * fill.bytes.size());
    for (int64_t i = 0; i < n; ++i) out.bytes += fill.bytes;
    return one(std::move(out));
  }
  return std::nullopt;
}

Result<FoldingStats> FoldConstants(SubgraphIr* ir, int64_t max_bytes) {
  FoldingStats stats;
  std::vector<std::optional<HostTensor>> known(ir->values.size());
  std::vector<bool> is_output(ir->values.size(), false);
  for (int v : ir->outputs) is_output[v] = true;
  auto constant = [&](int v) -> const HostTensor* {
    if (v < 0) return nullptr;
    if (known[v]) return &*known[v];
    const IrValue& val = ir->values[v];
    if (val.kind != ValueKind::kWeight || !val.bytes || !val.info.shape.is_static()) return nullptr;
    if (val.bytes->size() > max_bytes) return nullptr;
    auto bytes = val.bytes->ReadAll();
    if (!bytes.ok()) return nullptr;
    HostTensor t{val.info.dtype, {}, **bytes};
    for (const auto& d : val.info.shape.dims) t.dims.push_back(d.value);
    known[v] = std::move(t);
    return &*known[v];
  };
  for (auto& op : ir->ops) {
    bool blocked = false;
    for (int o : op.outputs) blocked = blocked || o < 0 || is_output[o];
    if (blocked) continue;
    // Cheap test first: weight bytes are read only when every input is a constant, so ops
    // on activations never pull large weights into memory.
    const bool shape_only = op.op_type == "Shape";
    bool all_constant = true;
    for (int v : op.inputs) {
      all_constant =
          all_constant && (v < 0 || known[v] || ir->values[v].kind == ValueKind::kWeight);
    }
    if (!all_constant && !shape_only) continue;
    std::vector<const HostTensor*> inputs;
    std::vector<graph::TensorInfo> infos;
    all_constant = true;
    for (int v : op.inputs) {
      inputs.push_back(shape_only ? nullptr : constant(v));
      infos.push_back(v >= 0 ? ir->values[v].info : graph::TensorInfo{});
      all_constant = all_constant && (v < 0 || inputs.back() || shape_only);
    }
    if (!all_constant) continue;
    auto result = EvaluateOp(op, inputs, infos);
    if (!result || result->size() != op.outputs.size()) continue;
    bool fits = true;
    for (const auto& r : *result) fits = fits && static_cast<int64_t>(r.bytes.size()) <= max_bytes;
    if (!fits) continue;
    for (size_t i = 0; i < result->size(); ++i) {
      IrValue& out = ir->values[op.outputs[i]];
      HostTensor& r = (*result)[i];
      out.kind = ValueKind::kWeight;
      out.info.dtype = r.dtype;
      out.info.shape = graph::Shape{true, {}};
      for (int64_t d : r.dims) out.info.shape.dims.push_back(graph::Dim{.value = d});
      out.bytes = bundle::ByteSource::Memory(std::make_shared<const std::string>(r.bytes));
      known[op.outputs[i]] = std::move(r);
    }
    op.removed = true;
    stats.folded_ops++;
  }
  ir->Compact();
  return stats;
}

}  // namespace ortc::lowering
