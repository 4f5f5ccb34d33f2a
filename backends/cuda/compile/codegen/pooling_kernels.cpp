// MaxPool and AveragePool over 1-D, 2-D and 3-D inputs, NCHW or channels last (NHWC): one
// thread per output element walks its window (kernel_shape, strides, pads or auto_pad,
// dilations, ceil_mode, count_include_pad), accumulating in float whatever the element type.
#include <algorithm>

#include "cuda/compile/codegen/emitters.h"
#include "cuda/compile/codegen/movement_util.h"

namespace ortc::backends::cuda::codegen {
namespace {

using namespace movement;

struct Window {
  std::vector<int64_t> in, kernel, strides, dilations, begin, end, out;
};

Result<Window> MakeWindow(const OpDesc& op, const std::vector<int64_t>& in) {
  const size_t n = in.size();
  Window w;
  w.in = in;
  w.kernel = IntsAttr(op, "kernel_shape");
  w.strides = IntsAttr(op, "strides");
  w.dilations = IntsAttr(op, "dilations");
  std::vector<int64_t> pads = IntsAttr(op, "pads");
  if (w.strides.empty()) w.strides.assign(n, 1);
  if (w.dilations.empty()) w.dilations.assign(n, 1);
  if (pads.empty()) pads.assign(2 * n, 0);
  if (w.kernel.size() != n || w.strides.size() != n || w.dilations.size() != n ||
      pads.size() != 2 * n)
    return InvalidArgument(op.op_type +
                           ": kernel_shape, strides, dilations or pads do not match the input");
  w.begin.assign(pads.begin(), pads.begin() + n);
  w.end.assign(pads.begin() + n, pads.end());
  const std::string auto_pad = StringAttr(op, "auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
      auto_pad != "SAME_LOWER")
    return InvalidArgument(op.op_type + ": unknown auto_pad '" + auto_pad + "'");
  const bool ceil_mode = IntAttr(op, "ceil_mode", 0) != 0;
  w.out.resize(n);
  for (size_t d = 0; d < n; ++d) {
    if (w.kernel[d] <= 0 || w.strides[d] <= 0 || w.dilations[d] <= 0 || w.begin[d] < 0 ||
        w.end[d] < 0)
      return InvalidArgument(op.op_type +
                             ": kernel, strides, dilations must be positive and "
                             "pads not negative");
    const int64_t span = w.dilations[d] * (w.kernel[d] - 1) + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      w.out[d] = (in[d] + w.strides[d] - 1) / w.strides[d];
      const int64_t total = std::max<int64_t>(0, (w.out[d] - 1) * w.strides[d] + span - in[d]);
      w.begin[d] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.end[d] = total - w.begin[d];
      continue;
    }
    if (auto_pad == "VALID") w.begin[d] = w.end[d] = 0;
    const int64_t room = in[d] + w.begin[d] + w.end[d] - span;
    if (room < 0) return InvalidArgument(op.op_type + ": the window is larger than the input");
    w.out[d] = (ceil_mode ? (room + w.strides[d] - 1) / w.strides[d] : room / w.strides[d]) + 1;
    // A last window starting in the end padding is dropped (as in the reference kernels).
    if (ceil_mode && (w.out[d] - 1) * w.strides[d] >= in[d] + w.begin[d]) --w.out[d];
  }
  return w;
}

// Threads walk the output in the input's order. NCHW: (plane nc = n * C + ch, positions).
// Channels last: (n, positions, ch), the channel innermost, so adjacent threads read adjacent
// channels at every window position (coalesced loads) instead of elements a plane apart.
// Names the coordinates nc or n and ch, and o0.. (the output position per spatial axis).
std::string WindowCoordinates(const OpDesc& op, const std::vector<int64_t>& dims,
                              const std::vector<int64_t>& out) {
  const size_t sp = out.size();
  const bool last = op.input_layout == Layout::kNhwc;
  std::vector<int64_t> loop = {last ? dims[0] : dims[0] * dims[1]};
  loop.insert(loop.end(), out.begin(), out.end());
  if (last) loop.push_back(dims[1]);
  std::string s = Decompose("i", loop, "c", "I");
  s += last ? "    const I n = c0, ch = " + Var("c", sp + 1) + ";\n" : "    const I nc = c0;\n";
  for (size_t d = 0; d < sp; ++d)
    s += "    const I " + Var("o", d) + " = " + Var("c", 1 + d) + ";\n";
  return s;
}

// Offset of element (n, ch, 0, ...) of the input.
std::string InputBase(const OpDesc& op, const std::vector<int64_t>& dims) {
  const int64_t plane = Product(std::vector<int64_t>(dims.begin() + 2, dims.end()));
  if (op.input_layout == Layout::kNhwc) return "n * " + Lit(plane * dims[1]) + " + ch";
  return "nc * " + Lit(plane);
}

// Where output element (n, ch, o...) goes: `i` when the output is stored in the loop's order.
std::string OutputIndex(const OpDesc& op, const std::vector<int64_t>& dims,
                        const std::vector<int64_t>& out) {
  if (op.output_layout == op.input_layout) return "i";
  const auto strides = Strides(out);
  std::string position;
  for (size_t d = 0; d < out.size(); ++d) position += " + " + Var("o", d) + " * " + Lit(strides[d]);
  const std::string c = Lit(dims[1]), plane = Lit(Product(out));
  if (op.output_layout == Layout::kNhwc)
    return "(nc / " + c + " * " + plane + position + ") * " + c + " + nc % " + c;
  return "(n * " + c + " + ch) * " + plane + position;
}

}  // namespace

bool IsPoolingOp(const std::string& op_type) {
  return op_type == "MaxPool" || op_type == "AveragePool";
}

Result<KernelSource> EmitPooling(const std::string& name, const OpDesc& op) {
  const bool max = op.op_type == "MaxPool";
  if (!IsPoolingOp(op.op_type)) return NotImplemented("no CUDA kernel generator for " + op.op_type);
  if (op.inputs.empty() || op.outputs.empty()) return InvalidArgument(op.op_type + ": no input");
  const int32_t dt = op.inputs[0].dtype;
  if (!IsFloatType(dt)) return NotImplemented(op.op_type + " on " + DtypeName(dt));
  if (op.outputs.size() > 1 && op.outputs[1].dtype != 0)
    return NotImplemented("MaxPool: the Indices output is not generated");
  if (IntAttr(op, "storage_order", 0) != 0)
    return NotImplemented("MaxPool: storage_order=1 (column-major indices) is not generated");
  const auto& dims = op.inputs[0].dims;
  if (dims.size() < 3 || dims.size() > 5)
    return NotImplemented(op.op_type + ": only 1-D, 2-D and 3-D spatial inputs");
  const std::vector<int64_t> spatial(dims.begin() + 2, dims.end());
  auto w = MakeWindow(op, spatial);
  if (!w.ok()) return w.status();
  std::vector<int64_t> out = {dims[0], dims[1]};
  out.insert(out.end(), w->out.begin(), w->out.end());
  if (std::string why = CheckOutputDims(op, 0, out); !why.empty()) return InvalidArgument(why);
  const bool count_pad = !max && IntAttr(op, "count_include_pad", 0) != 0;

  KernelText k;
  k.name = name;
  k.input_types = {FloatStorageType(dt)};
  k.output_types = {FloatStorageType(dt)};
  for (size_t i = 1; i < op.outputs.size(); ++i) k.output_types.push_back("");
  k.total = Product(out);
  k.body = WindowCoordinates(op, dims, w->out);
  k.body += "    const I base = " + InputBase(op, dims) + ";\n";
  k.body += max ? "    float best = 0.f;\n    bool any = false;\n" : "    float acc = 0.f;\n";
  k.body += "    int count = 0;\n";
  const bool in_last = op.input_layout == Layout::kNhwc;
  const int64_t channels = dims[1];
  const auto in_strides = Strides(spatial);
  std::string indent = "    ", offset = "base", valid;
  for (size_t d = 0; d < spatial.size(); ++d) {
    const std::string s = std::to_string(d), kv = "k" + s, p = "p" + s;
    k.body += indent + "for (int " + kv + " = 0; " + kv + " < " + std::to_string(w->kernel[d]) +
              "; ++" + kv + ") {\n";
    indent += "  ";
    k.body += indent + "const I " + p + " = " + Var("o", d) + " * " + Lit(w->strides[d]) + " - " +
              Lit(w->begin[d]) + " + (I)" + kv + " * " + Lit(w->dilations[d]) + ";\n";
    if (count_pad) {
      // Positions in the padding count; those past it (ceil_mode's extra window) do not.
      k.body += indent + "if (" + p + " >= " + Lit(spatial[d] + w->end[d]) + ") continue;\n";
      valid +=
          std::string(valid.empty() ? "" : " && ") + p + " >= 0 && " + p + " < " + Lit(spatial[d]);
    } else {
      k.body += indent + "if (" + p + " < 0 || " + p + " >= " + Lit(spatial[d]) + ") continue;\n";
    }
    offset += " + " + p + " * " + Lit(in_strides[d] * (in_last ? channels : 1));
  }
  const std::string load = LoadExpr(dt, "in0[" + offset + "]");
  k.body += indent + "++count;\n";
  if (max) {
    k.body += indent + "const float v = " + load + ";\n";
    k.body += indent + "if (!any || v > best) { best = v; any = true; }\n";
  } else if (count_pad) {
    k.body += indent + "if (" + valid + ") acc += " + load + ";\n";
  } else {
    k.body += indent + "acc += " + load + ";\n";
  }
  for (size_t d = 0; d < spatial.size(); ++d) {
    indent.resize(indent.size() - 2);
    k.body += indent + "}\n";
  }
  k.body += "    (void)count;\n";
  const std::string result =
      max ? "(any ? best : ortc_from_bits(0xff800000u))" : "(count ? acc / (float)count : 0.f)";
  k.body += "    out0[" + OutputIndex(op, dims, w->out) + "] = " + StoreExpr(dt, result) + ";\n";
  return Finish(k, std::max(Product(dims), k.total));
}

std::string PoolingUnsupported(const OpDesc& op) {
  auto k = EmitPooling("probe", op);
  return k.ok() ? "" : k.status().message();
}

}  // namespace ortc::backends::cuda::codegen
