// GroupedConv: depthwise and narrow grouped convolutions as one generated kernel, for the
// shapes where cuDNN falls back to its generic engines (measured on PP-OCR's depthwise layers).
// One thread per output element, walking the output in its storage order: channels last, so
// adjacent threads read adjacent channels of x and of the filter at every tap (coalesced), and
// the bias / residual / activation epilogue is applied before the one rounding to storage.
//
// Not an ONNX op: lowering forms it from a Conv unit (lowering_grouped_conv.cpp).
//   inputs:  x [N, C, spatial...] in input_layout; w [K, C/group, kernel...] stored taps-major,
//            K innermost ([C/group, kernel..., K], "CRSK"); bias [K] (dtype 0: none);
//            z [N, K, out...] in output_layout (dtype 0: none).
//   attributes: group, strides, dilations, pads (begin..., end...), activation (0 none,
//            1 Relu, 3 Clip: fb::Activation's values), clip_min, clip_max.
//   y = act(conv(x, w) + bias + z), accumulated in float.
#include <algorithm>

#include "cuda/compile/codegen/emitters.h"
#include "cuda/compile/codegen/movement_util.h"

namespace ortc::backends::cuda::codegen {
namespace {

using namespace movement;

struct ConvShape {
  int64_t group = 1, channels_per_group = 1, filters_per_group = 1;
  std::vector<int64_t> in, kernel, out, strides, dilations, pads;
};

Result<ConvShape> ReadShape(const OpDesc& op) {
  if (op.op_type != "GroupedConv")
    return NotImplemented("no CUDA kernel generator for " + op.op_type);
  if (op.inputs.size() != 4 || op.outputs.size() != 1)
    return InvalidArgument("GroupedConv: needs inputs x, w, bias, z and one output");
  const auto &x = op.inputs[0].dims, &w = op.inputs[1].dims, &y = op.outputs[0].dims;
  if (x.size() < 3 || x.size() > 4)
    return NotImplemented("GroupedConv: only 1-D and 2-D convolutions are generated");
  if (w.size() != x.size() || y.size() != x.size())
    return InvalidArgument("GroupedConv: x, w and y differ in rank");
  for (size_t i : {size_t{0}, size_t{1}, size_t{3}}) {
    if (op.inputs[i].dtype != 0 && !IsFloatType(op.inputs[i].dtype))
      return NotImplemented("GroupedConv on " + DtypeName(op.inputs[i].dtype));
  }
  if (!IsFloatType(op.inputs[0].dtype) || !IsFloatType(op.inputs[1].dtype) ||
      !IsFloatType(op.outputs[0].dtype))
    return NotImplemented("GroupedConv: x, w and y must be float tensors");
  ConvShape s;
  const size_t sp = x.size() - 2;
  s.group = IntAttr(op, "group", 1);
  s.strides = IntsAttr(op, "strides");
  s.dilations = IntsAttr(op, "dilations");
  s.pads = IntsAttr(op, "pads");
  if (s.strides.empty()) s.strides.assign(sp, 1);
  if (s.dilations.empty()) s.dilations.assign(sp, 1);
  if (s.pads.empty()) s.pads.assign(2 * sp, 0);
  if (s.strides.size() != sp || s.dilations.size() != sp || s.pads.size() != 2 * sp)
    return InvalidArgument("GroupedConv: strides, dilations or pads do not match the input");
  if (s.group <= 0 || x[1] % s.group != 0 || w[0] % s.group != 0 || w[1] * s.group != x[1])
    return InvalidArgument("GroupedConv: channels " + std::to_string(x[1]) + " and filter " +
                           DimsText(w) + " do not split into " + std::to_string(s.group) +
                           " groups");
  s.channels_per_group = w[1];
  s.filters_per_group = w[0] / s.group;
  s.in.assign(x.begin() + 2, x.end());
  s.kernel.assign(w.begin() + 2, w.end());
  std::vector<int64_t> out = {x[0], w[0]};
  for (size_t d = 0; d < sp; ++d) {
    if (s.strides[d] <= 0 || s.dilations[d] <= 0 || s.pads[d] < 0 || s.pads[sp + d] < 0 ||
        s.kernel[d] <= 0)
      return InvalidArgument(
          "GroupedConv: kernel, strides, dilations must be positive and pads "
          "not negative");
    const int64_t room =
        s.in[d] + s.pads[d] + s.pads[sp + d] - s.dilations[d] * (s.kernel[d] - 1) - 1;
    if (room < 0) return InvalidArgument("GroupedConv: the filter is larger than the input");
    out.push_back(room / s.strides[d] + 1);
  }
  if (std::string why = CheckOutputDims(op, 0, out); !why.empty()) return InvalidArgument(why);
  if (op.inputs[2].dtype != 0 && op.inputs[2].elements() != w[0])
    return InvalidArgument("GroupedConv: bias of " + DimsText(op.inputs[2].dims) + " for " +
                           std::to_string(w[0]) + " filters");
  if (op.inputs[3].dtype != 0 && op.inputs[3].dims != out)
    return InvalidArgument("GroupedConv: residual " + DimsText(op.inputs[3].dims) +
                           " does not match the output " + DimsText(out));
  const int64_t act = IntAttr(op, "activation", 0);
  if (act != 0 && act != 1 && act != 3)
    return NotImplemented("GroupedConv: activation " + std::to_string(act) + " is not generated");
  s.out.assign(out.begin() + 2, out.end());
  return s;
}

}  // namespace

bool IsGroupedConvOp(const std::string& op_type) {
  return op_type == "GroupedConv";
}

std::string GroupedConvUnsupported(const OpDesc& op) {
  auto s = ReadShape(op);
  return s.ok() ? "" : s.status().message();
}

Result<KernelSource> EmitGroupedConv(const std::string& name, const OpDesc& op) {
  auto shape = ReadShape(op);
  if (!shape.ok()) return shape.status();
  const ConvShape& s = *shape;
  const size_t sp = s.in.size();
  const auto& x = op.inputs[0];
  const auto& y = op.outputs[0];
  const bool bias = op.inputs[2].dtype != 0, residual = op.inputs[3].dtype != 0;
  const int64_t filters = op.inputs[1].dims[0];

  KernelText k;
  k.name = name;
  k.input_types = {FloatStorageType(x.dtype), FloatStorageType(op.inputs[1].dtype),
                   bias ? FloatStorageType(op.inputs[2].dtype) : "",
                   residual ? FloatStorageType(op.inputs[3].dtype) : ""};
  k.output_types = {FloatStorageType(y.dtype)};
  k.total = y.elements();
  // c0 = n, c1 = the filter, c2.. the output position, whatever order memory holds them in.
  k.body = DecomposeStored("i", y.dims, op.output_layout, "c", "I");
  const auto xs = StorageStrides(x.dims, op.input_layout);
  const std::string cg = Lit(s.channels_per_group);
  k.body += "    const I first = (c1 / " + Lit(s.filters_per_group) + ") * " + cg + ";\n";
  k.body += "    const I xn = c0 * " + Lit(xs[0]) + ";\n";
  k.body += "    float acc = 0.f;\n";
  std::string indent = "    ";
  // Filter element (cc, t0, t1..., k) of the CRSK storage: taps then filters innermost.
  std::string tap = "cc";
  if (s.channels_per_group > 1) {
    k.body += indent + "for (I cc = 0; cc < " + cg + "; ++cc) {\n";
    indent += "  ";
  } else {
    k.body += indent + "{\n" + indent + "  const I cc = 0;\n";
    indent += "  ";
  }
  k.body += indent + "const I xc = xn + (first + cc) * " + Lit(xs[1]) + ";\n";
  std::string offset = "xc";
  for (size_t d = 0; d < sp; ++d) {
    const std::string t = Var("t", d), p = Var("p", d);
    k.body +=
        indent + "for (I " + t + " = 0; " + t + " < " + Lit(s.kernel[d]) + "; ++" + t + ") {\n";
    indent += "  ";
    k.body += indent + "const I " + p + " = " + Var("c", 2 + d) + " * " + Lit(s.strides[d]) +
              " - " + Lit(s.pads[d]) + " + " + t + " * " + Lit(s.dilations[d]) + ";\n";
    k.body += indent + "if (" + p + " < 0 || " + p + " >= " + Lit(s.in[d]) + ") continue;\n";
    offset += " + " + p + " * " + Lit(xs[2 + d]);
    tap = "(" + tap + " * " + Lit(s.kernel[d]) + " + " + t + ")";
  }
  k.body += indent + "acc += " + LoadExpr(x.dtype, "in0[" + offset + "]") + " * " +
            LoadExpr(op.inputs[1].dtype, "in1[" + tap + " * " + Lit(filters) + " + c1]") + ";\n";
  for (size_t d = 0; d <= sp; ++d) {
    indent.resize(indent.size() - 2);
    k.body += indent + "}\n";
  }
  if (bias) k.body += "    acc += " + LoadExpr(op.inputs[2].dtype, "in2[c1]") + ";\n";
  if (residual) k.body += "    acc += " + LoadExpr(op.inputs[3].dtype, "in3[i]") + ";\n";
  switch (IntAttr(op, "activation", 0)) {
    case 1:
      k.body += "    acc = ortc_max(acc, 0.f);\n";
      break;
    case 3:
      k.body += "    acc = ortc_min(ortc_max(acc, " + FloatLiteral(FloatAttr(op, "clip_min", 0.f)) +
                "), " + FloatLiteral(FloatAttr(op, "clip_max", 6.f)) + ");\n";
      break;
    default:
      break;
  }
  k.body += "    out0[i] = " + StoreExpr(y.dtype, "acc") + ";\n";
  int64_t largest = k.total;
  for (const auto& t : op.inputs) largest = std::max(largest, t.elements());
  return Finish(k, largest);
}

}  // namespace ortc::backends::cuda::codegen
