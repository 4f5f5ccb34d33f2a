// Layout decisions of the CUDA lowering (lowering_layouts.h): reader needs, the layouts of ops
// with channels-last kernels and the layouts elementwise groups write.
#include "cuda/compile/lowering_layouts.h"

#include "cuda/compile/op_desc.h"

namespace ortc::backends::cuda {

using lowering::IrOp;
using lowering::SubgraphIr;
using lowering::ValueKind;

bool LayoutFree(const std::vector<int64_t>& d) {
  return d.size() == 4 && (d[1] == 1 || d[2] * d[3] == 1);
}

LayoutPolicy::LayoutPolicy(const SubgraphIr& ir, const std::vector<Unit>& units, bool enabled)
    : ir_(ir), enabled_(enabled), readers_(ir.values.size()) {
  for (size_t k = 0; k < ir.ops.size(); ++k) {
    if (ir.ops[k].removed) continue;
    for (int v : ir.ops[k].inputs) {
      if (v >= 0 && (readers_[v].empty() || readers_[v].back() != static_cast<int>(k)))
        readers_[v].push_back(static_cast<int>(k));
    }
  }
  // A convolution unit reads its residual through the Add it absorbed: that Add is elementwise,
  // but the convolution needs z in its own layout.
  for (const Unit& u : units) {
    if (u.kind != Unit::kConv || u.z < 0) continue;
    for (size_t j = 1; j < u.ops.size(); ++j) {
      for (int v : ir.ops[u.ops[j]].inputs) {
        if (v == u.z) residuals_.insert({u.ops[j], v});
      }
    }
  }
}

LayoutPolicy::Need LayoutPolicy::ReaderNeed(int k, int v) const {
  const IrOp& op = ir_.ops[k];
  if (residuals_.count({k, v})) return Need::kNhwc;
  if (op.op_type == "Conv" || op.op_type == "ConvTranspose")
    return op.inputs[0] == v ? Need::kNhwc : Need::kNchw;
  // Groups address every input through its own strides, whatever its layout.
  if (codegen::IsElementwise(op.op_type)) return Need::kEither;
  if (codegen::SupportsLayouts(op.op_type)) {
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      if (op.inputs[i] == v && codegen::LayoutApplies(op.op_type, i)) return Need::kEither;
    }
  }
  return Need::kNchw;
}

bool LayoutPolicy::Needed(int v, Need need, const std::set<int>& except) const {
  for (int k : readers_[v]) {
    if (!except.count(k) && ReaderNeed(k, v) == need) return true;
  }
  return false;
}

bool LayoutPolicy::NeedsNchw(int v, const std::set<int>& except) const {
  return ir_.values[v].kind == ValueKind::kOutput || Needed(v, Need::kNchw, except);
}

bool LayoutPolicy::NeedsNhwc(int v, const std::set<int>& except) const {
  return Needed(v, Need::kNhwc, except);
}

void LayoutPolicy::ChooseOpLayouts(int k, const State& s, codegen::OpDesc* d) const {
  using codegen::Layout;
  const IrOp& op = ir_.ops[k];
  if (!enabled_ || !codegen::SupportsLayouts(op.op_type) || op.outputs.empty() ||
      op.outputs[0] < 0 || d->outputs.empty() || d->outputs[0].dims.size() != 4)
    return;
  // The inputs the layout applies to, all 4-D: only those have NHWC buffers.
  std::vector<int> data;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const int v = op.inputs[i];
    if (v < 0 || !codegen::LayoutApplies(op.op_type, i)) continue;
    if (StaticDims(ir_.values[v].info).size() != 4) return;
    data.push_back(v);
  }
  if (data.empty()) return;
  // Reading NHWC transposes the inputs that exist only as NCHW (`nchw_only`), reading NCHW
  // those that exist only as NHWC (`nhwc_only`), unless another reader needs that copy anyway.
  int nhwc_only = 0, nchw_only = 0;
  bool shared = false;
  for (int v : data) {
    if (LayoutFree(StaticDims(ir_.values[v].info))) continue;
    if (s.nhwc[v] >= 0 && s.nchw[v] < 0) {
      ++nhwc_only;
      shared = shared || Needed(v, Need::kNchw, {k});
    } else if (s.nhwc[v] < 0) {
      ++nchw_only;
    }
  }
  const int y = op.outputs[0];
  // y is NHWC when nothing needs it in NCHW and either a convolution reads it or the op reads
  // NHWC input that nothing else needs in NCHW (so the transpose saved there covers a reader
  // that ends up NCHW after all).
  const bool y_nhwc = !LayoutFree(d->outputs[0].dims) && !NeedsNchw(y, {}) &&
                      (NeedsNhwc(y, {}) || (nhwc_only > nchw_only && !shared));
  const bool in_nhwc = nhwc_only > nchw_only || (nhwc_only == nchw_only && y_nhwc);
  d->input_layout = in_nhwc ? Layout::kNhwc : Layout::kNchw;
  d->output_layout = y_nhwc ? Layout::kNhwc : Layout::kNchw;
  if (!codegen::Unsupported(*d).empty()) d->input_layout = d->output_layout = Layout::kNchw;
}

bool LayoutPolicy::LeansNhwc(const std::vector<int>& inputs, const State& s) const {
  int nhwc_only = 0, nchw_only = 0;
  for (int v : inputs) {
    const auto dims = StaticDims(ir_.values[v].info);
    if (dims.size() != 4 || LayoutFree(dims)) continue;
    if (s.nhwc[v] >= 0 && s.nchw[v] < 0) ++nhwc_only;
    if (s.nhwc[v] < 0) ++nchw_only;
  }
  return nhwc_only > nchw_only;
}

LayoutPolicy::Writes LayoutPolicy::GroupOutput(int v, const std::set<int>& members,
                                               const std::vector<int>& inputs,
                                               const State& s) const {
  Writes w;
  const auto dims = StaticDims(ir_.values[v].info);
  if (!enabled_ || dims.size() != 4 || LayoutFree(dims)) {
    w.nchw = true;
    return w;
  }
  // Writing a second layout costs one more store per element, far less than a transpose
  // (a load and a store, in another kernel).
  w.nchw = NeedsNchw(v, members);
  w.nhwc = NeedsNhwc(v, members);
  if (!w.nchw && !w.nhwc) {
    // Only readers that take either layout: follow the group's inputs.
    if (LeansNhwc(inputs, s)) {
      w.nhwc = true;
    } else {
      w.nchw = true;
    }
  }
  return w;
}

}  // namespace ortc::backends::cuda
