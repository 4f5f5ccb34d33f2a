// Data-movement kernels: Transpose, Concat, Slice, Gather, Split, Expand, Tile, DepthToSpace,
// SpaceToDepth (here), Pad (pad_kernels.cpp) and Resize (resize_kernels.cpp). Each is an
// index-mapping kernel, one thread per output element in a grid-stride loop, with every shape
// baked in as constants. Transpose, Concat, Pad and Resize also read and write channels last.
#include <algorithm>

#include "base/shape_limit.h"
#include "base/shape_math.h"
#include "cuda/compile/codegen/emitters.h"
#include "cuda/compile/codegen/movement_util.h"

namespace ortc::backends::cuda::codegen {
namespace {

using namespace movement;

// A Concat of float tensors of different types into a float output (a cache kept in the
// model's float type, appended with rows computed at fp16): each element converted on its way.
bool ConvertsFloats(const OpDesc& op) {
  if (op.op_type != "Concat" || op.outputs.size() != 1 || !IsFloatType(op.outputs[0].dtype))
    return false;
  bool differ = false;
  for (const auto& t : op.inputs) {
    if (!IsFloatType(t.dtype)) return false;
    differ = differ || t.dtype != op.outputs[0].dtype;
  }
  return differ;
}

// Elements are copied as raw bits, so any fixed-size type works and results are bit-exact;
// only a converting Concat (ConvertsFloats) changes types.
std::string CheckMovable(const OpDesc& op) {
  if (op.inputs.empty() || op.inputs[0].dtype == 0) return op.op_type + ": missing data input";
  if (op.outputs.empty()) return op.op_type + ": no output";
  const int32_t dt = op.inputs[0].dtype;
  if (BitsType(dt).empty())
    return op.op_type + ": element type " + DtypeName(dt) + " has no fixed size";
  if (ConvertsFloats(op)) return "";
  for (const auto& o : op.outputs) {
    if (o.dtype != 0 && o.dtype != dt) return op.op_type + ": output type differs from the input";
  }
  return "";
}

// Parameter types: the data input (or all inputs for Concat) as element bits, others unused.
KernelText Skeleton(const std::string& name, const OpDesc& op, size_t typed_inputs) {
  KernelText k;
  k.name = name;
  const std::string bits = BitsType(op.inputs[0].dtype);
  for (size_t i = 0; i < op.inputs.size(); ++i)
    k.input_types.push_back(i < typed_inputs ? bits : "");
  for (size_t i = 0; i < op.outputs.size(); ++i) k.output_types.push_back(bits);
  return k;
}

int64_t Largest(const OpDesc& op) {
  int64_t n = 0;
  for (const auto& t : op.inputs) n = std::max(n, t.elements());
  for (const auto& t : op.outputs) n = std::max(n, t.elements());
  return n;
}

// out0[i] = in0[affine(i)]. The map's axes are the output's logical axes; threads walk them in
// the output's storage order.
Result<KernelSource> AffineCopy(const std::string& name, const OpDesc& op, AffineMap m,
                                const std::vector<int64_t>& out_dims) {
  if (std::string why = CheckOutputDims(op, 0, out_dims); !why.empty()) return InvalidArgument(why);
  if (op.output_layout != Layout::kNchw) {
    AffineMap stored;
    stored.base = m.base;
    for (size_t a : StorageOrder(m.dims.size(), op.output_layout)) {
      stored.dims.push_back(m.dims[a]);
      stored.strides.push_back(m.strides[a]);
      if (!m.modulo.empty()) stored.modulo.push_back(m.modulo[a]);
    }
    m = std::move(stored);
  }
  Simplify(m);
  KernelText k = Skeleton(name, op, 1);
  k.total = Product(out_dims);
  k.body = AffineSource(m, "I") + "    out0[i] = in0[src];\n";
  return Finish(k, Largest(op));
}

Result<KernelSource> Transpose(const std::string& name, const OpDesc& op) {
  const auto& in = op.inputs[0].dims;
  const auto rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> perm = IntsAttr(op, "perm");
  if (perm.empty()) {
    for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
  }
  if (static_cast<int64_t>(perm.size()) != rank)
    return InvalidArgument("Transpose: perm does not match the rank");
  std::vector<bool> seen(rank, false);
  // Channels-last storage of either side is one more permutation, composed into the map.
  const auto strides = StorageStrides(in, op.input_layout);
  AffineMap m;
  for (int64_t d = 0; d < rank; ++d) {
    if (perm[d] < 0 || perm[d] >= rank || seen[perm[d]])
      return InvalidArgument("Transpose: perm is not a permutation");
    seen[perm[d]] = true;
    m.dims.push_back(in[perm[d]]);
    m.strides.push_back(strides[perm[d]]);
  }
  return AffineCopy(name, op, m, m.dims);
}

Result<KernelSource> Slice(const std::string& name, const OpDesc& op) {
  const auto& in = op.inputs[0].dims;
  const auto rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (op.since_version < 10) {
    starts = IntsAttr(op, "starts");
    ends = IntsAttr(op, "ends");
    axes = IntsAttr(op, "axes");
  } else {
    auto s = ConstInts(op, 1, "starts");
    if (!s.ok()) return s.status();
    auto e = ConstInts(op, 2, "ends");
    if (!e.ok()) return e.status();
    starts = *s;
    ends = *e;
    if (HasInput(op, 3)) {
      auto a = ConstInts(op, 3, "axes");
      if (!a.ok()) return a.status();
      axes = *a;
    }
    if (HasInput(op, 4)) {
      auto st = ConstInts(op, 4, "steps");
      if (!st.ok()) return st.status();
      steps = *st;
    }
  }
  if (axes.empty()) {
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return InvalidArgument("Slice: starts, ends, axes and steps differ in length");
  const auto strides = Strides(in);
  AffineMap m;
  m.dims = in;
  m.strides = strides;
  std::vector<bool> seen(rank, false);
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t a = axes[k];
    if (!NormaliseAxis(a, rank) || seen[a]) return InvalidArgument("Slice: bad or repeated axis");
    seen[a] = true;
    if (steps[k] == 0) return InvalidArgument("Slice: step is zero");
    // Clamped as the specification says, without int64 overflow for extreme bounds or steps.
    const exec::SliceAxis r = exec::ResolveSliceAxis(in[a], starts[k], ends[k], steps[k]);
    m.dims[a] = r.count;
    m.base += r.begin * strides[a];
    m.strides[a] = r.step * strides[a];
  }
  return AffineCopy(name, op, m, m.dims);
}

Result<KernelSource> Expand(const std::string& name, const OpDesc& op) {
  auto shape = ConstInts(op, 1, "shape");
  if (!shape.ok()) return shape.status();
  const auto& in = op.inputs[0].dims;
  const size_t rank = std::max(in.size(), shape->size());
  std::vector<int64_t> out(rank);
  AffineMap m;
  const auto strides = Strides(in);
  for (size_t d = 0; d < rank; ++d) {
    const size_t xi = d + in.size(), si = d + shape->size();  // right-aligned
    const int64_t xd = xi >= rank ? in[xi - rank] : 1;
    const int64_t sd = si >= rank ? (*shape)[si - rank] : 1;
    if (xd != sd && xd != 1 && sd != 1)
      return InvalidArgument("Expand: cannot broadcast " + DimsText(in) + " to " +
                             DimsText(*shape));
    out[d] = xd == 1 ? sd : xd;
    m.dims.push_back(out[d]);
    m.strides.push_back(xi >= rank && xd != 1 ? strides[xi - rank] : 0);
  }
  return AffineCopy(name, op, m, out);
}

Result<KernelSource> Tile(const std::string& name, const OpDesc& op) {
  auto reps = ConstInts(op, 1, "repeats");
  if (!reps.ok()) return reps.status();
  const auto& in = op.inputs[0].dims;
  if (reps->size() != in.size()) return InvalidArgument("Tile: repeats do not match the rank");
  AffineMap m;
  m.strides = Strides(in);
  for (size_t d = 0; d < in.size(); ++d) {
    if ((*reps)[d] < 0) return InvalidArgument("Tile: negative repeat");
    // Bounded before multiplying (a repeat of 2^62 overflowed).
    if ((*reps)[d] > 0 && in[d] > exec::kMaxTensorElements / (*reps)[d])
      return InvalidArgument("Tile: the output would have more than 2^40 elements");
    m.dims.push_back(in[d] * (*reps)[d]);
    m.modulo.push_back(in[d]);
  }
  return AffineCopy(name, op, m, m.dims);
}

// DepthToSpace and SpaceToDepth are transposes of the input viewed as 6-D.
Result<KernelSource> DepthSpace(const std::string& name, const OpDesc& op, bool to_space) {
  const auto& in = op.inputs[0].dims;
  if (in.size() != 4) return NotImplemented(op.op_type + ": input must be 4-D");
  const int64_t b = IntAttr(op, "blocksize", 0);
  if (b <= 0) return InvalidArgument(op.op_type + ": blocksize must be positive");
  const int64_t N = in[0], C = in[1], H = in[2], W = in[3];
  std::vector<int64_t> view, perm, out;
  if (to_space) {
    if (C % (b * b) != 0)
      return InvalidArgument("DepthToSpace: channels are not a multiple of blocksize^2");
    const int64_t c = C / (b * b);
    const std::string mode = StringAttr(op, "mode", "DCR");
    if (mode == "DCR") {
      view = {N, b, b, c, H, W};
      perm = {0, 3, 4, 1, 5, 2};
    } else if (mode == "CRD") {
      view = {N, c, b, b, H, W};
      perm = {0, 1, 4, 2, 5, 3};
    } else {
      return InvalidArgument("DepthToSpace: unknown mode '" + mode + "'");
    }
    out = {N, c, H * b, W * b};
  } else {
    if (H % b != 0 || W % b != 0)
      return InvalidArgument("SpaceToDepth: spatial dims are not a multiple of blocksize");
    view = {N, C, H / b, b, W / b, b};
    perm = {0, 3, 5, 1, 2, 4};
    out = {N, C * b * b, H / b, W / b};
  }
  const auto vs = Strides(view);
  AffineMap m;
  for (int64_t p : perm) {
    m.dims.push_back(view[p]);
    m.strides.push_back(vs[p]);
  }
  return AffineCopy(name, op, m, out);
}

Result<KernelSource> Concat(const std::string& name, const OpDesc& op) {
  const auto& first = op.inputs[0].dims;
  int64_t axis = IntAttr(op, "axis", 0);
  if (!NormaliseAxis(axis, static_cast<int64_t>(first.size())))
    return InvalidArgument("Concat: axis out of range");
  std::vector<int64_t> out = first;
  out[axis] = 0;
  const bool convert = ConvertsFloats(op);
  for (const auto& t : op.inputs) {
    if (t.dtype != op.inputs[0].dtype && !convert)
      return InvalidArgument("Concat: inputs differ in type");
    if (t.dims.size() != first.size()) return InvalidArgument("Concat: inputs differ in rank");
    for (size_t d = 0; d < first.size(); ++d) {
      if (static_cast<int64_t>(d) != axis && t.dims[d] != first[d])
        return InvalidArgument("Concat: inputs differ off the axis");
    }
    out[axis] += t.dims[axis];
  }
  if (std::string why = CheckOutputDims(op, 0, out); !why.empty()) return InvalidArgument(why);
  KernelText k = Skeleton(name, op, op.inputs.size());
  if (convert) {  // typed pointers: elements are loaded and stored as numbers
    for (size_t j = 0; j < op.inputs.size(); ++j)
      k.input_types[j] = StorageCType(op.inputs[j].dtype);
    k.output_types[0] = StorageCType(op.outputs[0].dtype);
  }
  // Input j's element at `at`, as the output stores it.
  auto element = [&](size_t j, const std::string& at) {
    const std::string e = "in" + std::to_string(j) + "[" + at + "]";
    const int32_t from = op.inputs[j].dtype, to = op.outputs[0].dtype;
    return !convert || from == to ? e : StoreExpr(to, LoadExpr(from, e));
  };
  k.total = Product(out);
  if (op.input_layout != op.output_layout) {
    // Inputs in one layout, the output in the other: each thread finds its logical
    // coordinates, the input holding them along the axis, and that input's element.
    k.body = DecomposeStored("i", out, op.output_layout, "c", "I");
    const std::string along = Var("c", static_cast<size_t>(axis));
    std::string chain = "    ";
    int64_t offset = 0;
    for (size_t j = 0; j < op.inputs.size(); ++j) {
      const auto& dims = op.inputs[j].dims;
      if (Product(dims) == 0) {
        k.input_types[j] = "";  // an empty input is never read
        continue;
      }
      const auto strides = StorageStrides(dims, op.input_layout);
      std::string src = "(" + along + " - " + Lit(offset) + ") * " + Lit(strides[axis]);
      for (size_t d = 0; d < dims.size(); ++d) {
        if (static_cast<int64_t>(d) != axis && dims[d] > 1)
          src += " + " + Var("c", d) + " * " + Lit(strides[d]);
      }
      offset += dims[axis];
      const bool last = offset == out[axis];
      if (!last) chain += "if (" + along + " < " + Lit(offset) + ") ";
      chain += "out0[i] = " + element(j, src) + ";\n";
      if (!last) chain += "    else ";
    }
    k.body += chain;
    return Finish(k, Largest(op));
  }
  // One layout on both sides: rows of the output in storage order, `outer` rows of
  // out[axis]*inner elements, where inner multiplies the dims stored after the axis (channels
  // last, concatenating channels: inner is 1 and each input fills its run of channels of every
  // pixel). Input j fills the columns [offset_j, offset_j + its row) of every row.
  const auto order = StorageOrder(out.size(), op.output_layout);
  int64_t inner = 1;
  for (size_t j = order.size(); j-- > 0 && order[j] != static_cast<size_t>(axis);)
    inner *= out[order[j]];
  const int64_t row = out[axis] * inner;
  k.body = "    const I col = i % " + Lit(row) + ", o = i / " + Lit(row) + ";\n";
  int64_t offset = 0;
  std::string chain = "    ";
  for (size_t j = 0; j < op.inputs.size(); ++j) {
    const int64_t width = op.inputs[j].dims[axis] * inner;
    if (width == 0) {
      k.input_types[j] = "";  // an empty input is never read
      continue;
    }
    const bool last = offset + width == row;
    if (!last) chain += "if (col < " + Lit(offset + width) + ") ";
    chain +=
        "out0[i] = " + element(j, "o * " + Lit(width) + " + (col - " + Lit(offset) + ")") + ";\n";
    if (!last) chain += "    else ";
    offset += width;
  }
  k.body += chain;
  return Finish(k, Largest(op));
}

Result<KernelSource> Split(const std::string& name, const OpDesc& op) {
  const auto& in = op.inputs[0].dims;
  int64_t axis = IntAttr(op, "axis", 0);
  if (!NormaliseAxis(axis, static_cast<int64_t>(in.size())))
    return InvalidArgument("Split: axis out of range");
  const auto n = static_cast<int64_t>(op.outputs.size());
  const int64_t dim = in[axis];
  std::vector<int64_t> sizes;
  if (HasInput(op, 1) && (op.since_version >= 13 || op.since_version < 2)) {
    auto s = ConstInts(op, 1, "split");
    if (!s.ok()) return s.status();
    sizes = *s;
  } else if (op.since_version < 13 && FindAttribute(op, "split")) {
    sizes = IntsAttr(op, "split");
  } else if (FindAttribute(op, "num_outputs")) {
    if (IntAttr(op, "num_outputs", 0) != n)
      return InvalidArgument("Split: num_outputs differs from the number of outputs");
    const int64_t chunk = (dim + n - 1) / n;
    for (int64_t k = 0; k < n; ++k)
      sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - k * chunk)));
  } else {
    if (n == 0 || dim % n != 0)
      return InvalidArgument("Split: the axis does not divide into equal outputs");
    sizes.assign(n, dim / n);
  }
  if (static_cast<int64_t>(sizes.size()) != n)
    return InvalidArgument("Split: split sizes do not match the outputs");
  int64_t sum = 0;
  for (int64_t k = 0; k < n; ++k) {
    if (sizes[k] < 0) return InvalidArgument("Split: negative size");
    std::vector<int64_t> dims = in;
    dims[axis] = sizes[k];
    if (std::string why = CheckOutputDims(op, k, dims); !why.empty()) return InvalidArgument(why);
    sum += sizes[k];
  }
  if (sum != dim) return InvalidArgument("Split: sizes do not add up to the axis");
  // One loop per output over the largest of them; each output copies its columns of every row.
  const int64_t inner = Product(in, axis + 1), row = dim * inner;
  KernelText k = Skeleton(name, op, 1);
  for (int64_t j = 0, offset = 0; j < n; offset += sizes[j] * inner, ++j) {
    const int64_t width = sizes[j] * inner, total = width * Product(in, 0, axis);
    k.total = std::max(k.total, total);
    if (total == 0) continue;
    k.body += "    if (i < " + Lit(total) + ") out" + std::to_string(j) + "[i] = in0[(i / " +
              Lit(width) + ") * " + Lit(row) + " + " + Lit(offset) + " + i % " + Lit(width) +
              "];\n";
  }
  return Finish(k, Largest(op));
}

Result<KernelSource> Gather(const std::string& name, const OpDesc& op) {
  if (op.inputs.size() < 2 || op.inputs[1].dtype == 0) return InvalidArgument("Gather: no indices");
  const int32_t it = op.inputs[1].dtype;
  if (it != onnx::TensorProto::INT32 && it != onnx::TensorProto::INT64)
    return InvalidArgument("Gather: indices must be int32 or int64");
  const auto& in = op.inputs[0].dims;
  int64_t axis = IntAttr(op, "axis", 0);
  if (!NormaliseAxis(axis, static_cast<int64_t>(in.size())))
    return InvalidArgument("Gather: axis out of range");
  std::vector<int64_t> out(in.begin(), in.begin() + axis);
  for (int64_t d : op.inputs[1].dims) out.push_back(d);
  out.insert(out.end(), in.begin() + axis + 1, in.end());
  if (std::string why = CheckOutputDims(op, 0, out); !why.empty()) return InvalidArgument(why);
  const int64_t dim = in[axis], inner = Product(in, axis + 1), count = op.inputs[1].elements();
  if (dim == 0 && Product(out) > 0) return InvalidArgument("Gather: indexing an empty axis");
  KernelText k = Skeleton(name, op, 1);
  k.input_types[1] = it == onnx::TensorProto::INT32 ? "ortc_i32" : "ortc_i64";
  k.total = Product(out);
  // Indices are read on the device. Negative ones count from the end; out-of-range ones (an
  // error on the CPU) are clamped so that a bad index never reads outside the input.
  k.body = "    const I j = i % " + Lit(inner) + ", t = i / " + Lit(inner) + ";\n";
  k.body += "    const I o = t / " + Lit(count) + ";\n";
  k.body += "    long long idx = (long long)in1[t % " + Lit(count) + "];\n";
  k.body += "    if (idx < 0) idx += " + std::to_string(dim) + "LL;\n";
  k.body += "    idx = idx < 0 ? 0 : (idx > " + std::to_string(dim - 1) + "LL ? " +
            std::to_string(dim - 1) + "LL : idx);\n";
  k.body += "    out0[i] = in0[(o * " + Lit(dim) + " + (I)idx) * " + Lit(inner) + " + j];\n";
  return Finish(k, Largest(op));
}

}  // namespace

bool IsDataMovementOp(const std::string& op_type) {
  static const char* const kOps[] = {"Transpose",    "Concat", "Slice", "Gather",
                                     "Split",        "Expand", "Tile",  "DepthToSpace",
                                     "SpaceToDepth", "Pad",    "Resize"};
  return std::find(std::begin(kOps), std::end(kOps), op_type) != std::end(kOps);
}

Result<KernelSource> EmitDataMovement(const std::string& name, const OpDesc& op) {
  if (std::string why = CheckMovable(op); !why.empty()) return NotImplemented(why);
  const std::string& t = op.op_type;
  if (t == "Transpose") return Transpose(name, op);
  if (t == "Concat") return Concat(name, op);
  if (t == "Slice") return Slice(name, op);
  if (t == "Gather") return Gather(name, op);
  if (t == "Split") return Split(name, op);
  if (t == "Expand") return Expand(name, op);
  if (t == "Tile") return Tile(name, op);
  if (t == "DepthToSpace") return DepthSpace(name, op, true);
  if (t == "SpaceToDepth") return DepthSpace(name, op, false);
  if (t == "Pad") return EmitPad(name, op);
  if (t == "Resize") return EmitResize(name, op);
  return NotImplemented("no CUDA kernel generator for " + t);
}

std::string DataMovementUnsupported(const OpDesc& op) {
  // The emitter validates everything it relies on; its error is the reason.
  auto k = EmitDataMovement("probe", op);
  return k.ok() ? "" : k.status().message();
}

}  // namespace ortc::backends::cuda::codegen
