// Pad as an index-mapping kernel: constant, edge, reflect and wrap modes, pads (and axes) from
// attributes before opset 11 and from constant inputs after, NCHW or channels last on either
// side. Elements move as raw bits; the constant value is baked as the bits of the element type.
#include <algorithm>

#include "base/element_types.h"
#include "cuda/compile/codegen/movement_util.h"

namespace ortc::backends::cuda::codegen::movement {

Result<KernelSource> EmitPad(const std::string& name, const OpDesc& op) {
  const auto& in = op.inputs[0].dims;
  const int32_t dt = op.inputs[0].dtype;
  const auto rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> pads, axes;
  std::string value = BitsLiteral(dt, 0.0);
  bool value_on_device = false;  // a non-constant constant_value input is read at run time
  if (op.since_version < 11) {
    pads = IntsAttr(op, op.since_version < 2 ? "paddings" : "pads");
    value = BitsLiteral(dt, FloatAttr(op, "value", 0.f));
  } else {
    auto p = ConstInts(op, 1, "pads");
    if (!p.ok()) return p.status();
    pads = *p;
    if (HasInput(op, 2) && op.inputs[2].elements() > 0) {
      if (op.inputs[2].dtype != dt) return InvalidArgument("Pad: constant_value type differs");
      if (op.constants.size() > 2 && op.constants[2]) {
        const std::string& bytes = *op.constants[2];
        const size_t es = HeldElementBytes(dt);
        if (bytes.size() < es) return InvalidArgument("Pad: constant_value has no bytes");
        uint64_t bits = 0;
        for (size_t b = 0; b < es; ++b)  // little-endian
          bits |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[b])) << (8 * b);
        value = BitsOf(dt, bits);
      } else {
        value_on_device = true;
      }
    }
    if (op.since_version >= 18 && HasInput(op, 3)) {
      auto a = ConstInts(op, 3, "axes");
      if (!a.ok()) return a.status();
      axes = *a;
    }
  }
  if (axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  if (pads.size() != 2 * axes.size()) return InvalidArgument("Pad: pads do not match the axes");
  std::vector<int64_t> before(rank, 0), after(rank, 0);
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t a = axes[k];
    if (!NormaliseAxis(a, rank)) return InvalidArgument("Pad: axis out of range");
    before[a] = pads[k];
    after[a] = pads[k + axes.size()];
  }
  const std::string mode = StringAttr(op, "mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect" &&
      !(mode == "wrap" && op.since_version >= 19))
    return NotImplemented("Pad: mode '" + mode + "' is not supported");
  std::vector<int64_t> out(rank);
  constexpr int64_t kLimit = (int64_t{1} << 31) - 1;  // kernels write pads as int literals
  for (int64_t d = 0; d < rank; ++d) {
    if (before[d] < -kLimit || before[d] > kLimit || after[d] < -kLimit || after[d] > kLimit)
      return NotImplemented("Pad: pads beyond 32 bits");
    out[d] = in[d] + before[d] + after[d];
    if (out[d] < 0) return InvalidArgument("Pad: negative output dimension");
    if (mode != "constant" && in[d] == 0 && out[d] > 0)
      return NotImplemented("Pad: " + mode + " padding of an empty axis");
  }
  if (std::string why = CheckOutputDims(op, 0, out); !why.empty()) return InvalidArgument(why);

  KernelText k;
  k.name = name;
  const std::string bits = BitsType(dt);
  for (size_t i = 0; i < op.inputs.size(); ++i)
    k.input_types.push_back(i == 0 || (i == 2 && value_on_device) ? bits : "");
  k.output_types.push_back(bits);
  k.total = Product(out);
  // Threads walk the output in its storage order; c0.. are logical coordinates either way.
  const auto strides = StorageStrides(in, op.input_layout);
  k.body = DecomposeStored("i", out, op.output_layout, "c", "I");
  k.body += "    bool inside = true;\n    I src = 0;\n";
  for (int64_t d = 0; d < rank; ++d) {
    if (in[d] == 1 && before[d] == 0 && after[d] == 0) continue;
    const std::string c = Var("c", d), x = Var("x", d);
    const std::string n = Lit(in[d]);
    k.body += "    I " + x + " = " + c + " - " + Lit(before[d]) + ";\n";
    if (before[d] > 0 || after[d] > 0) {
      if (mode == "constant") {
        k.body += "    if (" + x + " < 0 || " + x + " >= " + n + ") inside = false;\n";
      } else if (mode == "edge") {
        k.body += "    " + x + " = " + x + " < 0 ? 0 : (" + x + " >= " + n + " ? " + n +
                  " - 1 : " + x + ");\n";
      } else if (mode == "reflect") {
        if (in[d] == 1) {
          k.body += "    " + x + " = 0;\n";
        } else {
          const std::string period = Lit(2 * (in[d] - 1));
          k.body += "    " + x + " = ((" + x + " % " + period + ") + " + period + ") % " + period +
                    ";\n    if (" + x + " >= " + n + ") " + x + " = " + period + " - " + x + ";\n";
        }
      } else {  // wrap
        k.body += "    " + x + " = ((" + x + " % " + n + ") + " + n + ") % " + n + ";\n";
      }
    }
    k.body += "    src += " + x + " * " + Lit(strides[d]) + ";\n";
  }
  k.body += "    out0[i] = inside ? in0[src] : " + (value_on_device ? "in2[0]" : value) + ";\n";
  int64_t largest = k.total;
  for (const auto& t : op.inputs) largest = std::max(largest, t.elements());
  return Finish(k, largest);
}

}  // namespace ortc::backends::cuda::codegen::movement
