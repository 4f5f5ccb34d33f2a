// Indexing kernels: scatters, GatherND, Compress, Unique, ReverseSequence, MaxUnpool.
#include <algorithm>
#include <map>
#include <numeric>

#include "cpu/runtime/kernels/kernel_util.h"
#include "cpu/runtime/kernels/registry.h"

namespace ortc::exec {
namespace {

double Combine(const std::string& reduction, double old, double update) {
  if (reduction == "add") return old + update;
  if (reduction == "mul") return old * update;
  if (reduction == "max") return std::max(old, update);
  if (reduction == "min") return std::min(old, update);
  return update;
}

Status ScatterElements(KernelContext& c) {
  const Tensor& data = c.in(0);
  auto idx = IntsOf(c.input(1));
  const Tensor& updates = c.in(2);
  if (!idx) return c.Error("indices must be integers");
  int64_t axis = c.op().Int("axis", 0);
  if (!NormaliseAxis(axis, data.rank())) return c.Error("axis out of range");
  const std::string reduction = c.op().String("reduction", "none");
  // indices and updates share a shape of data's rank, no larger than data off the axis.
  const Tensor& ind = c.in(1);
  bool fits = ind.rank() == data.rank() && updates.shape() == ind.shape() &&
              updates.dtype() == data.dtype();
  for (int64_t d = 0; fits && d < data.rank(); ++d)
    fits = d == axis || ind.shape()[d] <= data.shape()[d];
  if (!fits)
    return c.Error(
        "ScatterElements indices and updates must have one shape, of data's rank and "
        "no larger than data off the axis, and updates data's type");
  Tensor y = data.Clone();
  const auto ds = Strides(data.shape());
  const auto us = Strides(c.in(1).shape());
  for (int64_t i = 0; i < c.in(1).elements(); ++i) {
    int64_t rem = i, dst = 0;
    for (int64_t d = 0; d < data.rank(); ++d) {
      int64_t coord = rem / us[d];
      rem %= us[d];
      if (d == axis) {
        coord = (*idx)[i];
        if (coord < 0) coord += data.shape()[d];
        if (coord < 0 || coord >= data.shape()[d]) return c.Error("index out of range");
      }
      dst += coord * ds[d];
    }
    SetElementFromDouble(y, dst,
                         Combine(reduction, ElementAsDouble(y, dst), ElementAsDouble(updates, i)));
  }
  c.SetOutput(0, y);
  return Status::Ok();
}

Status ScatterND(KernelContext& c) {
  const Tensor& data = c.in(0);
  const Tensor& ind = c.in(1);
  const Tensor& updates = c.in(2);
  auto idx = IntsOf(&ind);
  if (!idx) return c.Error("indices must be integers");
  const std::string reduction = c.op().String("reduction", "none");
  if (ind.rank() < 1 || ind.shape().back() < 1 || ind.shape().back() > data.rank())
    return c.Error("ScatterND indices' last dimension must be in [1, rank(data)]");
  const int64_t k = ind.shape().back();
  const int64_t slice = Product(data.shape(), k), count = ind.elements() / k;
  if (updates.elements() != count * slice || updates.dtype() != data.dtype())
    return c.Error(
        "ScatterND updates must have data's type and indices.shape[:-1] + "
        "data.shape[k:] elements");
  const auto ds = Strides(data.shape());
  Tensor y = data.Clone();
  for (int64_t n = 0; n < count; ++n) {
    int64_t base = 0;
    for (int64_t j = 0; j < k; ++j) {
      int64_t v = (*idx)[n * k + j];
      if (v < 0) v += data.shape()[j];
      if (v < 0 || v >= data.shape()[j]) return c.Error("index out of range");
      base += v * ds[j];
    }
    for (int64_t s = 0; s < slice; ++s) {
      SetElementFromDouble(y, base + s,
                           Combine(reduction, ElementAsDouble(y, base + s),
                                   ElementAsDouble(updates, n * slice + s)));
    }
  }
  c.SetOutput(0, y);
  return Status::Ok();
}

Status GatherND(KernelContext& c) {
  const Tensor& data = c.in(0);
  const Tensor& ind = c.in(1);
  auto idx = IntsOf(&ind);
  if (!idx) return c.Error("indices must be integers");
  const int64_t b = c.op().Int("batch_dims", 0);
  // What the loops below index: the batch dimensions shared, k index dimensions within data.
  if (ind.rank() < 1 || b < 0 || b >= ind.rank() || b > data.rank())
    return c.Error("GatherND batch_dims must be in [0, rank(indices) - 1] and <= rank(data)");
  const int64_t k = ind.shape().back();
  if (k < 1 || b + k > data.rank())
    return c.Error("GatherND indices' last dimension must be in [1, rank(data) - batch_dims]");
  for (int64_t d = 0; d < b; ++d)
    if (ind.shape()[d] != data.shape()[d])
      return c.Error("GatherND batch dimensions of data and indices differ");
  std::vector<int64_t> shape(ind.shape().begin(), ind.shape().end() - 1);
  shape.insert(shape.end(), data.shape().begin() + b + k, data.shape().end());
  Tensor& y = c.Output(0, data.dtype(), shape);
  const int64_t batch = Product(data.shape(), 0, b), slice = Product(data.shape(), b + k);
  const int64_t per_batch = Product(ind.shape(), b, ind.shape().size() - 1);
  const int64_t batch_stride = Product(data.shape(), b);
  const auto ds = Strides(data.shape());
  int64_t out = 0;
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t n = 0; n < per_batch; ++n) {
      int64_t base = bi * batch_stride;
      for (int64_t j = 0; j < k; ++j) {
        int64_t v = (*idx)[(bi * per_batch + n) * k + j];
        const int64_t dim = data.shape()[b + j];
        if (v < 0) v += dim;
        if (v < 0 || v >= dim)
          return c.Error("GatherND index " + std::to_string((*idx)[(bi * per_batch + n) * k + j]) +
                         " is out of range for a dimension of " + std::to_string(dim));
        base += v * ds[b + j];
      }
      for (int64_t s = 0; s < slice; ++s)
        SetElementFromDouble(y, out++, ElementAsDouble(data, base + s));
    }
  return Status::Ok();
}

Status Compress(KernelContext& c) {
  const Tensor& x = c.in(0);
  const Tensor& cond = c.in(1);
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < cond.elements(); ++i) {
    if (ElementAsDouble(cond, i) != 0) keep.push_back(i);
  }
  if (!c.op().Has("axis")) {
    std::vector<int64_t> picked;
    for (int64_t i : keep) {
      if (i < x.elements()) picked.push_back(i);
    }
    Tensor& y = c.Output(0, x.dtype(), {static_cast<int64_t>(picked.size())});
    for (size_t i = 0; i < picked.size(); ++i)
      SetElementFromDouble(y, static_cast<int64_t>(i), ElementAsDouble(x, picked[i]));
    return Status::Ok();
  }
  int64_t axis = c.op().Int("axis", 0);
  if (!NormaliseAxis(axis, x.rank())) return c.Error("axis out of range");
  const int64_t dim = x.shape()[axis];
  keep.erase(std::remove_if(keep.begin(), keep.end(), [&](int64_t i) { return i >= dim; }),
             keep.end());
  std::vector<int64_t> shape = x.shape();
  shape[axis] = static_cast<int64_t>(keep.size());
  Tensor& y = c.Output(0, x.dtype(), shape);
  const int64_t outer = Product(x.shape(), 0, axis), inner = Product(x.shape(), axis + 1);
  int64_t out = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k : keep)
      for (int64_t j = 0; j < inner; ++j)
        SetElementFromDouble(y, out++, ElementAsDouble(x, (o * dim + k) * inner + j));
  return Status::Ok();
}

// A strict weak order on values with NaN: NaNs are equal to each other and after every number.
// Plain < on vectors holding NaN is no order at all, which std::map and std::sort may not be given
// (libstdc++'s insertion sort can then walk before the range).
struct NanLastLess {
  static bool Less(double a, double b) { return !std::isnan(a) && (std::isnan(b) || a < b); }
  bool operator()(const std::vector<double>& a, const std::vector<double>& b) const {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), Less);
  }
};

Status Unique(KernelContext& c) {
  const Tensor& x = c.in(0);
  const bool sorted = c.op().Int("sorted", 1) != 0;
  const bool has_axis = c.op().Has("axis");
  int64_t axis = c.op().Int("axis", 0);
  int64_t outer = 1, dim = x.elements(), inner = 1;
  if (has_axis) {
    if (!NormaliseAxis(axis, x.rank())) return c.Error("axis out of range");
    outer = Product(x.shape(), 0, axis);
    dim = x.shape()[axis];
    inner = Product(x.shape(), axis + 1);
    // Every slice would be empty and the same: a loop of up to 2^40 for one item.
    if (outer * inner == 0 && dim > 0)
      return c.Error("Unique along an axis of a tensor with no elements is not supported");
  }
  // Each "item" is a slice along the axis (or one element), compared as a vector of values.
  auto item = [&](int64_t k) {
    std::vector<double> v;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < inner; ++j)
        v.push_back(ElementAsDouble(x, (o * dim + k) * inner + j));
    return v;
  };
  std::vector<std::vector<double>> items;
  std::vector<int64_t> first, counts, inverse(dim);
  std::map<std::vector<double>, int64_t, NanLastLess> seen;
  for (int64_t k = 0; k < dim; ++k) {
    auto v = item(k);
    auto it = seen.find(v);
    if (it == seen.end()) {
      it = seen.emplace(v, static_cast<int64_t>(items.size())).first;
      items.push_back(v);
      first.push_back(k);
      counts.push_back(0);
    }
    counts[it->second]++;
    inverse[k] = it->second;
  }
  std::vector<int64_t> order(items.size());
  std::iota(order.begin(), order.end(), 0);
  if (sorted)
    std::sort(order.begin(), order.end(),
              [&](int64_t a, int64_t b) { return NanLastLess()(items[a], items[b]); });
  std::vector<int64_t> rank_of(items.size());
  for (size_t r = 0; r < order.size(); ++r) rank_of[order[r]] = static_cast<int64_t>(r);
  const auto u = static_cast<int64_t>(items.size());
  std::vector<int64_t> shape = has_axis ? x.shape() : std::vector<int64_t>{u};
  if (has_axis) shape[axis] = u;
  Tensor& y = c.Output(0, x.dtype(), shape);
  for (int64_t r = 0; r < u; ++r) {
    const auto& v = items[order[r]];
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < inner; ++j)
        SetElementFromDouble(y, (o * u + r) * inner + j, v[o * inner + j]);
  }
  if (c.wants_output(1)) {
    Tensor& t = c.Output(1, DataType::kInt64, {u});
    for (int64_t r = 0; r < u; ++r) t.mutable_data<int64_t>()[r] = first[order[r]];
  }
  if (c.wants_output(2)) {
    Tensor& t = c.Output(2, DataType::kInt64, {dim});
    for (int64_t k = 0; k < dim; ++k) t.mutable_data<int64_t>()[k] = rank_of[inverse[k]];
  }
  if (c.wants_output(3)) {
    Tensor& t = c.Output(3, DataType::kInt64, {u});
    for (int64_t r = 0; r < u; ++r) t.mutable_data<int64_t>()[r] = counts[order[r]];
  }
  return Status::Ok();
}

Status ReverseSequence(KernelContext& c) {
  const Tensor& x = c.in(0);
  auto lens = IntsOf(c.input(1));
  if (!lens) return c.Error("sequence_lens must be int64");
  const int64_t batch_axis = c.op().Int("batch_axis", 1), time_axis = c.op().Int("time_axis", 0);
  // One length per batch entry, each within the time dimension, over the two axes the
  // specification allows (found by fuzz_model: a short sequence_lens was read past).
  if (x.rank() < 2 || !((batch_axis == 0 && time_axis == 1) || (batch_axis == 1 && time_axis == 0)))
    return c.Error("ReverseSequence needs rank >= 2 and batch_axis, time_axis of 0 and 1");
  if (static_cast<int64_t>(lens->size()) != x.shape()[batch_axis])
    return c.Error("ReverseSequence sequence_lens must have one entry per batch entry (" +
                   std::to_string(x.shape()[batch_axis]) + ")");
  for (int64_t len : *lens)
    if (len < 0 || len > x.shape()[time_axis])
      return c.Error("ReverseSequence sequence_lens must be in [0, " +
                     std::to_string(x.shape()[time_axis]) + "], got " + std::to_string(len));
  Tensor y = x.Clone();
  const auto s = Strides(x.shape());
  for (int64_t i = 0; i < x.elements(); ++i) {
    const int64_t b = (i / s[batch_axis]) % x.shape()[batch_axis];
    const int64_t t = (i / s[time_axis]) % x.shape()[time_axis];
    if (t < (*lens)[b]) {
      const int64_t src = i + ((*lens)[b] - 1 - t - t) * s[time_axis];
      SetElementFromDouble(y, i, ElementAsDouble(x, src));
    }
  }
  c.SetOutput(0, y);
  return Status::Ok();
}

Status MaxUnpool(KernelContext& c) {
  const Tensor& x = c.in(0);
  auto idx = IntsOf(c.input(1));
  if (!idx) return c.Error("indices must be int64");
  // The shape MaxPool's input had: indices are flat positions in it.
  const auto k = c.op().Ints("kernel_shape");
  const auto st = c.op().Ints("strides", std::vector<int64_t>(k.size(), 1));
  const auto pads = c.op().Ints("pads", std::vector<int64_t>(2 * k.size(), 0));
  const size_t nsp = k.size();
  if (nsp == 0 || x.rank() != static_cast<int64_t>(nsp) + 2 || st.size() != nsp ||
      pads.size() != 2 * nsp)
    return c.Error("MaxUnpool kernel_shape, strides and pads must match the input's spatial rank");
  constexpr int64_t kMaxWindow = int64_t{1} << 31;  // keeps the shape within 64 bits
  for (size_t d = 0; d < nsp; ++d)
    if (k[d] < 1 || st[d] < 1 || k[d] > kMaxWindow || st[d] > kMaxWindow || pads[d] < 0 ||
        pads[d + nsp] < 0 || pads[d] > kMaxWindow || pads[d + nsp] > kMaxWindow)
      return c.Error("MaxUnpool kernel_shape and strides must be in [1, 2^31], pads in [0, 2^31]");
  if (static_cast<int64_t>(idx->size()) != x.elements())
    return c.Error("MaxUnpool indices must have the input's shape");
  std::vector<int64_t> natural = {x.shape()[0], x.shape()[1]};
  for (size_t d = 0; d < k.size(); ++d) {
    if (x.shape()[2 + d] - 1 > kMaxTensorElements / st[d])  // before multiplying
      return c.Error("MaxUnpool's output would have more than 2^40 elements");
    natural.push_back((x.shape()[2 + d] - 1) * st[d] + k[d] - pads[d] - pads[d + k.size()]);
  }
  for (int64_t n : natural)
    if (n < 0) return c.Error("MaxUnpool pads leave a negative output size");
  // Its strides and size are computed below even when output_shape asks for less.
  if (!ShapeWithinLimit(natural))
    return c.Error("MaxUnpool's output would have more than 2^40 elements");
  std::vector<int64_t> shape = natural;
  if (c.has_input(2)) {
    auto requested = IntsOf(c.input(2));
    if (!requested || requested->size() != natural.size())
      return c.Error("output_shape must match the rank");
    shape = *requested;
  }
  Tensor& y = c.Output(0, x.dtype(), shape);
  const auto ns = Strides(natural), ys = Strides(shape);
  for (int64_t i = 0; i < x.elements(); ++i) {
    int64_t rem = (*idx)[i], dst = 0;
    if (rem < 0 || rem >= Product(natural)) return c.Error("index out of range");
    for (size_t d = 0; d < natural.size(); ++d) {  // same coordinates, in the requested shape
      const int64_t coord = rem / ns[d];
      rem %= ns[d];
      if (coord >= shape[d]) return c.Error("index outside output_shape");
      dst += coord * ys[d];
    }
    SetElementFromDouble(y, dst, ElementAsDouble(x, i));
  }
  return Status::Ok();
}

}  // namespace

void RegisterIndexingKernels(KernelTable& t) {
  t["ScatterElements"] = ScatterElements;
  t["Scatter"] = ScatterElements;
  t["ScatterND"] = ScatterND;
  t["GatherND"] = GatherND;
  t["Compress"] = Compress;
  t["Unique"] = Unique;
  t["ReverseSequence"] = ReverseSequence;
  t["MaxUnpool"] = MaxUnpool;
}

}  // namespace ortc::exec
