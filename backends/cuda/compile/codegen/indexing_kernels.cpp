// Indexing kernels: GatherND, GatherElements, ScatterND, ScatterElements (indices read on the
// device, as exporters' advanced indexing computes them at run time) and Trilu (a mask of
// positions). One thread per output element in a grid-stride loop, shapes baked in.
//
// Out-of-range indices: the CPU runtime refuses them; a kernel cannot report, so every index
// goes through the prelude's ortc_index, as Gather's does: negative values count from the end,
// what is still outside the axis is clamped to its first or last element. No kernel here ever
// reads or writes outside its tensors, whatever the indices hold.
//
// Scatters are computed by their owners: each thread owns one output element, starts from the
// data and applies, in the order the CPU runtime applies them, the updates whose index lands on
// it. There is no atomic and no race, duplicates included, and the result is the CPU's: the last
// update wins for reduction "none", the others combine in update order (fp16/bf16 accumulate in
// fp32 and round once, at the store).
#include <algorithm>

#include "cuda/compile/codegen/emitters.h"
#include "cuda/compile/codegen/movement_util.h"

namespace ortc::backends::cuda::codegen {
namespace {

using namespace movement;
using onnx::TensorProto;

std::string CheckIndices(const OpDesc& op, size_t i) {
  if (!HasInput(op, i)) return op.op_type + ": no indices";
  const int32_t t = op.inputs[i].dtype;
  if (t != TensorProto::INT32 && t != TensorProto::INT64)
    return op.op_type + ": indices of type " + DtypeName(t) + " (int32 or int64 only)";
  return "";
}

std::string IndexCType(const OpDesc& op, size_t i) {
  return op.inputs[i].dtype == TensorProto::INT32 ? "ortc_i32" : "ortc_i64";
}

// "ortc_index((ortc_i64)in<i>[at], dim)" as an I.
std::string ReadIndex(size_t input, const std::string& at, int64_t dim) {
  return "(I)ortc_index((ortc_i64)in" + std::to_string(input) + "[" + at + "], " +
         std::to_string(dim) + "LL)";
}

// Data input 0 and output 0 of one fixed-size type (copied as bits).
std::string CheckData(const OpDesc& op) {
  if (!HasInput(op, 0)) return op.op_type + ": missing data input";
  if (op.outputs.empty()) return op.op_type + ": no output";
  const int32_t dt = op.inputs[0].dtype;
  if (BitsType(dt).empty())
    return op.op_type + ": element type " + DtypeName(dt) + " has no fixed size";
  if (op.outputs[0].dtype != dt) return op.op_type + ": output type differs from the data's";
  return "";
}

int64_t Largest(const OpDesc& op) {
  int64_t n = 0;
  for (const auto& t : op.inputs) n = std::max(n, t.elements());
  for (const auto& t : op.outputs) n = std::max(n, t.elements());
  return n;
}

KernelText Skeleton(const std::string& name, const OpDesc& op) {
  KernelText k;
  k.name = name;
  for (size_t i = 0; i < op.inputs.size(); ++i) k.input_types.push_back("");
  k.output_types.push_back(BitsType(op.outputs[0].dtype));
  k.input_types[0] = BitsType(op.inputs[0].dtype);
  return k;
}

// GatherND-12/13 with batch_dims: output [indices.dims[:-1], data.dims[b + k:]].
Result<KernelSource> GatherND(const std::string& name, const OpDesc& op) {
  if (std::string why = CheckIndices(op, 1); !why.empty()) return InvalidArgument(why);
  const auto& data = op.inputs[0].dims;
  const auto& ind = op.inputs[1].dims;
  const auto r = static_cast<int64_t>(data.size()), q = static_cast<int64_t>(ind.size());
  const int64_t b = IntAttr(op, "batch_dims", 0);
  if (q < 1 || b < 0 || b >= q || b > r)
    return InvalidArgument(
        "GatherND: batch_dims must be in [0, rank(indices) - 1] and <= rank(data)");
  const int64_t k = ind.back();
  if (k < 1 || b + k > r)
    return InvalidArgument(
        "GatherND: indices' last dimension must be in [1, rank(data) - batch_dims]");
  for (int64_t d = 0; d < b; ++d)
    if (ind[d] != data[d]) return InvalidArgument("GatherND: batch dimensions differ");
  std::vector<int64_t> out(ind.begin(), ind.end() - 1);
  out.insert(out.end(), data.begin() + b + k, data.end());
  if (std::string why = CheckOutputDims(op, 0, out); !why.empty()) return InvalidArgument(why);
  for (int64_t j = 0; j < k; ++j)
    if (data[b + j] == 0 && Product(out) > 0)
      return InvalidArgument("GatherND: indexing an empty axis");
  // (Sizes that are 0 leave no element to compute; they are kept out of the divisions.)
  const int64_t slice = std::max<int64_t>(1, Product(data, b + k)),
                per_batch = std::max<int64_t>(1, Product(ind, b, q - 1));
  const auto strides = Strides(data);
  KernelText t = Skeleton(name, op);
  t.input_types[1] = IndexCType(op, 1);
  t.total = Product(out);
  // Output element i: tuple n = i / slice of the indices (batch n / per_batch), element s.
  t.body = "    const I n = i / " + Lit(slice) + ";\n";
  std::string src =
      "(n / " + Lit(per_batch) + ") * " + Lit(b > 0 ? strides[b - 1] : 0) + " + i % " + Lit(slice);
  for (int64_t j = 0; j < k; ++j) {
    const std::string at = "n * " + Lit(k) + " + " + Lit(j);
    src += " + " + ReadIndex(1, at, data[b + j]) + " * " + Lit(strides[b + j]);
  }
  t.body += "    out0[i] = in0[" + src + "];\n";
  return Finish(t, Largest(op));
}

// GatherElements: output [indices.dims]; element c reads data at c with axis coordinate
// indices[c].
Result<KernelSource> GatherElements(const std::string& name, const OpDesc& op) {
  if (std::string why = CheckIndices(op, 1); !why.empty()) return InvalidArgument(why);
  const auto& data = op.inputs[0].dims;
  const auto& ind = op.inputs[1].dims;
  const auto r = static_cast<int64_t>(data.size());
  int64_t axis = IntAttr(op, "axis", 0);
  if (!NormaliseAxis(axis, r)) return InvalidArgument("GatherElements: axis out of range");
  bool fits = static_cast<int64_t>(ind.size()) == r;
  for (int64_t d = 0; fits && d < r; ++d) fits = d == axis || ind[d] <= data[d];
  if (!fits)
    return InvalidArgument(
        "GatherElements: indices must have data's rank and be no larger off the axis");
  if (std::string why = CheckOutputDims(op, 0, ind); !why.empty()) return InvalidArgument(why);
  if (data[axis] == 0 && Product(ind) > 0)
    return InvalidArgument("GatherElements: indexing an empty axis");
  const auto strides = Strides(data);
  KernelText t = Skeleton(name, op);
  t.input_types[1] = IndexCType(op, 1);
  t.total = Product(ind);
  t.body = Decompose("i", ind, "c", "I");
  std::string src = ReadIndex(1, "i", data[axis]) + " * " + Lit(strides[axis]);
  for (int64_t d = 0; d < r; ++d)
    if (d != axis && ind[d] > 1) src += " + c" + std::to_string(d) + " * " + Lit(strides[d]);
  t.body += "    out0[i] = in0[" + src + "];\n";
  return Finish(t, Largest(op));
}

// The reduction of a scatter as a statement updating `v` (compute type) with `u`.
Result<std::string> Combine(const OpDesc& op, int32_t dtype) {
  const std::string red = StringAttr(op, "reduction", "none");
  const bool f = IsFloatType(dtype), b = dtype == TensorProto::BOOL;
  if (red == "none") return std::string("v = u;");
  // As the CPU runtime: add and mul wrap on integers and are Or / And on bool; max keeps the
  // current value unless the update is larger (a NaN update is ignored), min likewise.
  if (red == "add")
    return std::string(f ? "v = v + u;" : b ? "v = v || u;" : "v = ortc_wadd(v, u);");
  if (red == "mul")
    return std::string(f ? "v = v * u;" : b ? "v = v && u;" : "v = ortc_wmul(v, u);");
  if (red == "max") return std::string("v = v < u ? u : v;");
  if (red == "min") return std::string("v = u < v ? u : v;");
  return InvalidArgument(op.op_type + ": unknown reduction '" + red + "'");
}

// Typed views and loads of a scatter: bits for "none", compute types for reductions.
struct ScatterText {
  std::string load_data, load_update, store, vtype;
};
ScatterText ScatterTypes(const OpDesc& op, KernelText& t) {
  const int32_t dt = op.inputs[0].dtype;
  ScatterText s;
  if (StringAttr(op, "reduction", "none") == "none") {
    t.input_types[0] = t.input_types[2] = t.output_types[0] = BitsType(dt);
    s.vtype = BitsType(dt);
    s.load_data = "in0[i]";
    s.load_update = "in2[UPD]";
    s.store = "v";
    return s;
  }
  t.input_types[0] = t.input_types[2] = t.output_types[0] = StorageCType(dt);
  s.vtype = ComputeCType(dt);
  s.load_data = LoadExpr(dt, "in0[i]");
  s.load_update = LoadExpr(dt, "in2[UPD]");
  s.store = StoreExpr(dt, "v");
  return s;
}

std::string CheckScatter(const OpDesc& op) {
  if (std::string why = CheckIndices(op, 1); !why.empty()) return why;
  if (!HasInput(op, 2)) return op.op_type + ": no updates";
  const int32_t dt = op.inputs[0].dtype;
  if (op.inputs[2].dtype != dt) return op.op_type + ": updates differ in type from the data";
  if (StringAttr(op, "reduction", "none") != "none" && !IsStorageType(dt))
    return op.op_type + " with a reduction on " + DtypeName(dt) + " is not supported";
  return "";
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// ScatterElements (and Scatter-9/11): output [data.dims]. The updates landing on output element
// c share its coordinates off the axis, so its owner scans one line of indices along the axis.
Result<KernelSource> ScatterElements(const std::string& name, const OpDesc& op) {
  if (std::string why = CheckScatter(op); !why.empty()) return InvalidArgument(why);
  const auto& data = op.inputs[0].dims;
  const auto& ind = op.inputs[1].dims;
  const auto r = static_cast<int64_t>(data.size());
  int64_t axis = IntAttr(op, "axis", 0);
  if (!NormaliseAxis(axis, r)) return InvalidArgument(op.op_type + ": axis out of range");
  bool fits = static_cast<int64_t>(ind.size()) == r && op.inputs[2].dims == ind;
  for (int64_t d = 0; fits && d < r; ++d) fits = d == axis || ind[d] <= data[d];
  if (!fits)
    return InvalidArgument(op.op_type +
                           ": indices and updates must have one shape, of data's rank and no "
                           "larger than data off the axis");
  if (std::string why = CheckOutputDims(op, 0, data); !why.empty()) return InvalidArgument(why);
  auto combine = Combine(op, op.inputs[0].dtype);
  if (!combine.ok()) return combine.status();
  KernelText t = Skeleton(name, op);
  t.input_types[1] = IndexCType(op, 1);
  const ScatterText s = ScatterTypes(op, t);
  t.total = Product(data);
  const auto us = Strides(ind);
  t.body = Decompose("i", data, "c", "I");
  t.body += "    " + s.vtype + " v = " + s.load_data + ";\n";
  // The owner's line of updates exists when its coordinates off the axis are within them.
  std::string within, base = Lit(0);
  for (int64_t d = 0; d < r; ++d) {
    if (d == axis) continue;
    const std::string c = "c" + std::to_string(d);
    if (ind[d] < data[d])
      within += std::string(within.empty() ? "" : " && ") + c + " < " + Lit(ind[d]);
    if (ind[d] > 1) base += " + " + c + " * " + Lit(us[d]);
  }
  if (ind[axis] > 0 && Product(ind) > 0) {
    t.body += "    if (" + (within.empty() ? std::string("true") : within) + ") {\n";
    t.body += "      const I base = " + base + ";\n";
    t.body += "      for (I j = 0; j < " + Lit(ind[axis]) + "; ++j) {\n";
    t.body += "        const I at = base + j * " + Lit(us[axis]) + ";\n";
    t.body += "        if (" + ReadIndex(1, "at", data[axis]) + " != c" + std::to_string(axis) +
              ") continue;\n";
    t.body += "        const " + s.vtype + " u = " + Replace(s.load_update, "UPD", "at") + ";\n";
    t.body += "        " + *combine + "\n";
    t.body += "      }\n    }\n";
  }
  t.body += "    out0[i] = " + s.store + ";\n";
  return Finish(t, Largest(op));
}

// A scatter's owners each scan every index tuple: refused beyond this many tuple tests per
// kernel (about a millisecond of a large GPU), where a scatter would need another algorithm.
constexpr int64_t kMaxScatterTests = int64_t{1} << 31;

// ScatterND: output [data.dims]; tuple n of indices (k values) addresses a slice of
// data.dims[k:] that updates[n] holds. Owners compare each tuple's position with their own.
Result<KernelSource> ScatterND(const std::string& name, const OpDesc& op) {
  if (std::string why = CheckScatter(op); !why.empty()) return InvalidArgument(why);
  const auto& data = op.inputs[0].dims;
  const auto& ind = op.inputs[1].dims;
  const auto r = static_cast<int64_t>(data.size());
  if (ind.empty() || ind.back() < 1 || ind.back() > r)
    return InvalidArgument("ScatterND: indices' last dimension must be in [1, rank(data)]");
  const int64_t k = ind.back();
  std::vector<int64_t> upd(ind.begin(), ind.end() - 1);
  upd.insert(upd.end(), data.begin() + k, data.end());
  if (op.inputs[2].dims != upd)
    return InvalidArgument("ScatterND: updates must be indices.shape[:-1] + data.shape[k:], " +
                           DimsText(upd) + ", not " + DimsText(op.inputs[2].dims));
  if (std::string why = CheckOutputDims(op, 0, data); !why.empty()) return InvalidArgument(why);
  const int64_t count = Product(ind, 0, ind.size() - 1), slice = Product(data, k);
  if (count > 0 && Product(data) > kMaxScatterTests / count)
    return NotImplemented("ScatterND of " + std::to_string(count) + " index tuples into " +
                          std::to_string(Product(data)) +
                          " elements: each output element scans every tuple, too slow beyond "
                          "2^31 tests (the CPU runs it)");
  auto combine = Combine(op, op.inputs[0].dtype);
  if (!combine.ok()) return combine.status();
  KernelText t = Skeleton(name, op);
  t.input_types[1] = IndexCType(op, 1);
  const ScatterText s = ScatterTypes(op, t);
  t.total = Product(data);
  const auto strides = Strides(data);
  t.body = "    " + s.vtype + " v = " + s.load_data + ";\n";
  if (count > 0 && slice > 0) {
    // The owner's slice start, and each tuple's, as element offsets in data.
    t.body += "    const I s = i % " + Lit(slice) + ", own = i - s;\n";
    t.body += "    for (I n = 0; n < " + Lit(count) + "; ++n) {\n";
    std::string pos = Lit(0);
    for (int64_t j = 0; j < k; ++j)
      pos +=
          " + " + ReadIndex(1, "n * " + Lit(k) + " + " + Lit(j), data[j]) + " * " + Lit(strides[j]);
    t.body += "      if (" + pos + " != own) continue;\n";
    t.body += "      const " + s.vtype +
              " u = " + Replace(s.load_update, "UPD", "n * " + Lit(slice) + " + s") + ";\n";
    t.body += "      " + *combine + "\n";
    t.body += "    }\n";
  }
  t.body += "    out0[i] = " + s.store + ";\n";
  return Finish(t, std::max(Largest(op), count * k));
}

// Trilu: keeps the upper (col - row >= k) or lower (col - row <= k) triangle of the last two
// axes, zero elsewhere. k is baked when constant, else read on the device.
Result<KernelSource> Trilu(const std::string& name, const OpDesc& op) {
  const auto& x = op.inputs[0].dims;
  if (x.size() < 2) return InvalidArgument("Trilu: the input must have rank >= 2");
  if (std::string why = CheckOutputDims(op, 0, x); !why.empty()) return InvalidArgument(why);
  KernelText t = Skeleton(name, op);
  const int64_t rows = x[x.size() - 2], cols = x.back();
  std::string k = "0LL";
  if (HasInput(op, 1)) {
    if (op.inputs[1].dtype != TensorProto::INT64 || op.inputs[1].elements() != 1)
      return InvalidArgument("Trilu: k must be one int64");
    if (auto v = ConstInts(op, 1, "k"); v.ok()) {
      // Beyond the matrix every k keeps all or nothing: clamped, it stays a small literal.
      const int64_t bound = rows + cols;
      k = std::to_string(std::clamp<int64_t>(v->at(0), -bound, bound)) + "LL";
    } else {
      t.input_types[1] = "ortc_i64";
      k = "in1[0]";
    }
  }
  const bool upper = IntAttr(op, "upper", 1) != 0;
  t.total = Product(x);
  t.body = "    const ortc_i64 col = (ortc_i64)(i % " + Lit(std::max<int64_t>(cols, 1)) +
           "), row = (ortc_i64)((i / " + Lit(std::max<int64_t>(cols, 1)) + ") % " +
           Lit(std::max<int64_t>(rows, 1)) + ");\n";
  // col - row is within the 2^40 bound on sizes: compared with any int64 k, nothing overflows.
  t.body += "    const ortc_i64 k = " + k + ";\n";
  t.body += std::string("    const bool keep = col - row ") + (upper ? ">=" : "<=") + " k;\n";
  t.body += "    out0[i] = keep ? in0[i] : (" + BitsType(op.inputs[0].dtype) + ")0;\n";
  return Finish(t, Largest(op));
}

}  // namespace

bool IsIndexingOp(const std::string& op_type) {
  return op_type == "GatherND" || op_type == "GatherElements" || op_type == "ScatterND" ||
         op_type == "ScatterElements" || op_type == "Scatter" || op_type == "Trilu";
}

Result<KernelSource> EmitIndexing(const std::string& name, const OpDesc& op) {
  if (std::string why = CheckData(op); !why.empty()) return NotImplemented(why);
  const std::string& t = op.op_type;
  if (t == "GatherND") return GatherND(name, op);
  if (t == "GatherElements") return GatherElements(name, op);
  if (t == "ScatterND") return ScatterND(name, op);
  if (t == "ScatterElements" || t == "Scatter") return ScatterElements(name, op);
  if (t == "Trilu") return Trilu(name, op);
  return NotImplemented("no CUDA kernel generator for " + t);
}

std::string IndexingUnsupported(const OpDesc& op) {
  // The emitter validates everything it relies on; its error is the reason.
  auto k = EmitIndexing("probe", op);
  return k.ok() ? "" : k.status().message();
}

}  // namespace ortc::backends::cuda::codegen
