// Ops that return their input (identity_ops.h).
#include "lowering/identity_ops.h"

#include <cstring>
#include <memory>
#include <optional>

namespace ortc::lowering {
namespace {

// The values of constant input `i` (IntConstant); an absent input reads as an empty list.
std::optional<std::vector<int64_t>> ConstantInts(const SubgraphIr& ir, const IrOp& op, size_t i) {
  if (i >= op.inputs.size() || op.inputs[i] < 0) return std::vector<int64_t>{};
  return IntConstant(ir, op.inputs[i]);
}

bool AllEqual(const std::optional<std::vector<int64_t>>& values, int64_t x) {
  if (!values) return false;
  for (int64_t v : *values)
    if (v != x) return false;
  return true;
}

// A Transpose moves no element when the axes longer than 1 keep their order.
bool KeepsOrder(const std::vector<int64_t>& perm, const std::vector<int64_t>& dims) {
  int64_t last = -1;
  for (int64_t a : perm) {
    if (a < 0 || a >= static_cast<int64_t>(dims.size())) return false;
    if (dims[a] == 1) continue;
    if (a < last) return false;
    last = a;
  }
  return true;
}

// The permutation a Transpose applies (the reversal when it has none).
std::vector<int64_t> Permutation(const IrOp& op, size_t rank) {
  std::vector<int64_t> perm = op.IntsAttr("perm");
  if (perm.empty())
    for (int64_t a = static_cast<int64_t>(rank) - 1; a >= 0; --a) perm.push_back(a);
  return perm;
}

}  // namespace

int ReturnedInput(const SubgraphIr& ir, const IrOp& op) {
  if (op.removed || !op.domain.empty() || op.outputs.size() != 1 || op.outputs[0] < 0 ||
      op.inputs.empty() || op.inputs[0] < 0 || !op.subgraphs.empty())
    return -1;
  const IrValue& in = ir.values[op.inputs[0]];
  const IrValue& out = ir.values[op.outputs[0]];
  if (in.info.dtype != out.info.dtype || in.layout != out.layout || !in.info.shape.is_static() ||
      !out.info.shape.is_static())
    return -1;
  const std::vector<int64_t> dims = in.info.shape.Sizes();
  if (dims != out.info.shape.Sizes()) return -1;
  const std::string& t = op.op_type;
  bool same = false;
  if (t == "Identity" || t == "Cast" || t == "Reshape" || t == "Flatten" || t == "Squeeze" ||
      t == "Unsqueeze" || t == "Expand" || t == "Tile") {
    same = true;
  } else if (t == "Slice") {
    // Equal shapes with positive steps select every element in order (a step past 1 would
    // shorten an axis longer than 1); opset 1's Slice has no steps.
    auto steps = ConstantInts(ir, op, 4);
    same = steps.has_value();
    for (int64_t s : steps.value_or(std::vector<int64_t>{})) same = same && s > 0;
  } else if (t == "Pad") {
    same = op.since_version >= 11 ? AllEqual(ConstantInts(ir, op, 1), 0)
                                  : AllEqual(op.IntsAttr("pads"), 0);
  } else if (t == "Transpose") {
    const std::vector<int64_t> perm = Permutation(op, dims.size());
    same = perm.size() == dims.size() && KeepsOrder(perm, dims);
  } else if (t == "Concat") {
    same = op.inputs.size() == 1;
  }
  return same ? op.inputs[0] : -1;
}

int TransposesToReshapes(SubgraphIr* ir) {
  int rewritten = 0;
  for (auto& op : ir->ops) {
    if (op.removed || op.op_type != "Transpose" || !op.domain.empty() || op.inputs.size() != 1 ||
        op.inputs[0] < 0 || op.outputs.size() != 1 || op.outputs[0] < 0)
      continue;
    const graph::Shape& in = ir->values[op.inputs[0]].info.shape;
    const graph::Shape& out = ir->values[op.outputs[0]].info.shape;
    if (!in.is_static() || !out.is_static()) continue;
    const std::vector<int64_t> dims = in.Sizes(), shape = out.Sizes();
    const std::vector<int64_t> perm = Permutation(op, dims.size());
    if (perm.size() != dims.size() || !KeepsOrder(perm, dims)) continue;
    const int shape_value = ir->AddInt64s(ir->values[op.outputs[0]].name + ".shape", shape);
    op.op_type = "Reshape";
    op.since_version = 14;
    op.attributes.clear();
    op.inputs.push_back(shape_value);
    ++rewritten;
  }
  return rewritten;
}

int WriteOutputsAtSource(SubgraphIr* ir) {
  int moved = 0;
  for (int o : ir->outputs) {
    IrOp* copy = ir->Producer(o);
    if (copy == nullptr) continue;
    const int v = ReturnedInput(*ir, *copy);
    // The value must be the source's own (not an input, a weight or another output, whose
    // buffers are fixed elsewhere).
    if (v < 0 || ir->values[v].kind != ValueKind::kIntermediate) continue;
    IrOp* source = ir->Producer(v);
    if (source == nullptr) continue;
    copy->removed = true;
    for (int& w : source->outputs)
      if (w == v) w = o;
    for (auto& op : ir->ops) {
      if (op.removed) continue;
      for (int& w : op.inputs)
        if (w == v) w = o;
    }
    ++moved;
  }
  return moved;
}

}  // namespace ortc::lowering
