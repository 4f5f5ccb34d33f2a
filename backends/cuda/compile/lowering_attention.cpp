// Recognises scaled dot-product attention in a lowering IR by what it computes, and replaces it
// with one FusedAttention op (codegen/attention_kernels.cpp):
//   P = Softmax(last axis) of S, where S is Q K^T (a MatMul) followed by any of: a scale (Mul or
//   Div by a scalar, also applied to Q or K^T before the MatMul, as SDPA's decomposition splits
//   it), one additive mask (Add), one boolean mask (Where(cond, S, fill) either way round),
//   float-to-float Casts; then P, optionally guarded (Where(IsNaN(P), 0, P): rows whose every
//   key is masked become zeros, which the kernel does anyway), Cast or Dropout (inference),
//   multiplies V (a MatMul).
// Q, K and V are read through views of what feeds them (lowering_views.h: Transpose, Reshape,
// Expand, Slice, Split... fitted by index walking), so head splitting, K^T, GQA's repeated key
// and value heads and the slices of a fused QKV projection cost no copy; a Transpose after the
// output (head merging) becomes a permutation the kernel writes through.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "cuda/compile/lowering.h"
#include "cuda/compile/lowering_ir_index.h"
#include "cuda/compile/lowering_views.h"
#include "cuda/compile/op_desc.h"

namespace ortc::backends::cuda {
namespace {

using lowering::IrOp;
using lowering::SubgraphIr;
using lowering::ValueKind;

using Index = IrIndex;

std::vector<int64_t> Identity(size_t rank) {
  std::vector<int64_t> p(rank);
  std::iota(p.begin(), p.end(), 0);
  return p;
}

std::vector<int64_t> TransposePerm(const IrOp& t, size_t rank) {
  const auto* a = t.Attr("perm");
  if (!a || a->ints_size() == 0) {
    std::vector<int64_t> p(rank);
    for (size_t i = 0; i < rank; ++i) p[i] = static_cast<int64_t>(rank - 1 - i);
    return p;
  }
  return {a->ints().begin(), a->ints().end()};
}

bool IsFloat(int32_t t) {
  return t == onnx::TensorProto::FLOAT || t == onnx::TensorProto::FLOAT16 ||
         t == onnx::TensorProto::BFLOAT16;
}

// The live ops reading v.
std::vector<int> Readers(const SubgraphIr& ir, int v) {
  std::vector<int> r;
  for (size_t i = 0; i < ir.ops.size(); ++i) {
    const IrOp& op = ir.ops[i];
    if (op.removed) continue;
    if (std::find(op.inputs.begin(), op.inputs.end(), v) != op.inputs.end())
      r.push_back(static_cast<int>(i));
  }
  return r;
}

// A float-to-float Cast, or an inference Dropout / Identity: the value passes through unchanged
// as far as the fused kernel (which computes in fp32) is concerned.
bool PassThrough(const Index& x, const IrOp& op) {
  if (op.outputs.empty() || op.outputs[0] < 0 || op.inputs.empty() || op.inputs[0] < 0)
    return false;
  if (op.op_type == "Identity") return true;
  if (op.op_type == "Cast")
    return IsFloat(x.ir.values[op.inputs[0]].info.dtype) &&
           IsFloat(x.ir.values[op.outputs[0]].info.dtype);
  if (op.op_type == "Dropout") {
    if (op.outputs.size() > 1 && op.outputs[1] >= 0) return false;
    const int mode = op.inputs.size() > 2 ? op.inputs[2] : -1;
    return mode < 0 || x.ir.values[mode].kind == ValueKind::kWeight;  // checked by the kernel
  }
  return false;
}

bool Broadcasts(const std::vector<int64_t>& mask, const std::vector<int64_t>& scores) {
  if (mask.size() > scores.size()) return false;
  const size_t pad = scores.size() - mask.size();
  for (size_t i = 0; i < mask.size(); ++i) {
    if (mask[i] != 1 && mask[i] != scores[pad + i]) return false;
  }
  return true;
}

// Whether v is computed from a MatMul of two activations through the ops a score path may
// hold (scales, masks, pass-throughs), each read once: the Q K^T side of a mask Add.
bool LeadsToProduct(const Index& x, int v, int depth = 0) {
  if (depth > 12 || v < 0 || x.producer[v] < 0 || !x.Internal(v) || x.ir.UseCount(v) != 1)
    return false;
  const IrOp& op = x.ir.ops[x.producer[v]];
  if (op.op_type == "MatMul") {
    return op.inputs.size() == 2 && x.ir.values[op.inputs[0]].kind != ValueKind::kWeight &&
           x.ir.values[op.inputs[1]].kind != ValueKind::kWeight;
  }
  if (PassThrough(x, op)) return LeadsToProduct(x, op.inputs[0], depth + 1);
  if (op.op_type != "Where" && op.op_type != "Mul" && op.op_type != "Div" && op.op_type != "Add")
    return false;
  for (size_t i = op.op_type == "Where" ? 1 : 0; i < op.inputs.size(); ++i) {
    if (LeadsToProduct(x, op.inputs[i], depth + 1)) return true;
  }
  return false;
}

// Tries to fuse the attention around Softmax op `s`; true when it did.
bool FuseAt(SubgraphIr* ir, int s) {
  const Index x(*ir);
  const IrOp& softmax = ir->ops[s];
  if (softmax.inputs.empty() || softmax.outputs.size() != 1) return false;
  const auto score_dims = x.Dims(softmax.inputs[0]);
  const size_t rank = score_dims.size();
  if (rank < 3 || rank > 4) return false;
  int64_t axis = softmax.IntAttr("axis", softmax.since_version < 13 ? 1 : -1);
  if (axis < 0) axis += static_cast<int64_t>(rank);
  if (axis != static_cast<int64_t>(rank) - 1) return false;
  std::vector<int> fused = {s};
  // Forward from the probabilities to the MatMul with V, through guards and pass-throughs.
  int probs = softmax.outputs[0];
  int pv = -1;
  for (int depth = 0; depth < 8 && pv < 0; ++depth) {
    if (!x.Internal(probs)) return false;
    const auto readers = Readers(*ir, probs);
    if (readers.size() == 1) {
      const IrOp& r = ir->ops[readers[0]];
      if (r.op_type == "MatMul" && r.inputs.size() == 2 && r.inputs[0] == probs &&
          r.inputs[1] != probs) {
        pv = readers[0];
      } else if (PassThrough(x, r) && r.inputs[0] == probs) {
        fused.push_back(readers[0]);
        probs = r.outputs[0];
      } else {
        return false;
      }
      continue;
    }
    // Where(IsNaN(P), 0, P): NaN rows (every key masked to -inf) become zeros.
    if (readers.size() != 2) return false;
    int isnan = -1, where = -1;
    for (int r : readers) {
      const IrOp& op = ir->ops[r];
      if (op.op_type == "IsNaN") isnan = r;
      if (op.op_type == "Where") where = r;
    }
    if (isnan < 0 || where < 0) return false;
    const IrOp& n = ir->ops[isnan];
    const IrOp& w = ir->ops[where];
    const auto zero = w.inputs.size() == 3 ? x.Scalar(w.inputs[1]) : std::nullopt;
    if (n.outputs.size() != 1 || !x.Internal(n.outputs[0]) || ir->UseCount(n.outputs[0]) != 1 ||
        w.inputs.size() != 3 || w.inputs[0] != n.outputs[0] || w.inputs[2] != probs || !zero ||
        *zero != 0.f)
      return false;
    fused.push_back(isnan);
    fused.push_back(where);
    probs = w.outputs[0];
  }
  if (pv < 0) return false;
  fused.push_back(pv);
  // Backwards from the Softmax's input to Q K^T: scale, one additive mask, one boolean mask.
  int v = softmax.inputs[0];
  int mask = -1, cond = -1;
  float fill = 0.f, scale = 1.f;
  bool keep_if_true = true, mask_after_where = false;
  const IrOp* qk = nullptr;
  for (int depth = 0; depth < 12 && !qk; ++depth) {
    if (v < 0 || x.producer[v] < 0 || !x.Internal(v) || ir->UseCount(v) != 1) return false;
    const int p = x.producer[v];
    const IrOp& op = ir->ops[p];
    if (op.op_type == "MatMul" && op.inputs.size() == 2) {
      qk = &op;
      fused.push_back(p);
      break;
    }
    fused.push_back(p);
    if (PassThrough(x, op)) {
      v = op.inputs[0];
    } else if ((op.op_type == "Mul" || op.op_type == "Div") && op.inputs.size() == 2) {
      const auto c1 = x.Scalar(op.inputs[1]);
      const auto c0 = op.op_type == "Mul" ? x.Scalar(op.inputs[0]) : std::nullopt;
      if (c1 && (op.op_type == "Mul" || *c1 != 0.f)) {
        scale *= op.op_type == "Mul" ? *c1 : 1.f / *c1;
        v = op.inputs[0];
      } else if (c0) {
        scale *= *c0;
        v = op.inputs[1];
      } else {
        return false;
      }
    } else if (op.op_type == "Add" && op.inputs.size() == 2 && mask < 0) {
      // The score path is the side that leads back to Q K^T; the mask is the other.
      int side = -1;
      for (int k = 0; k < 2 && side < 0; ++k) {
        if (op.inputs[k] != op.inputs[1 - k] && x.Dims(op.inputs[k]) == score_dims &&
            LeadsToProduct(x, op.inputs[k]))
          side = k;
      }
      if (side < 0) return false;
      // A scale collected so far was applied after the mask and would scale it too: only a
      // unit scale keeps the kernel's order (scale, then add the mask) exact.
      if (scale != 1.f) return false;
      mask = op.inputs[1 - side];
      v = op.inputs[side];
    } else if (op.op_type == "Where" && op.inputs.size() == 3 && cond < 0) {
      const auto a = x.Scalar(op.inputs[1]), b = x.Scalar(op.inputs[2]);
      if (b && !a) {
        v = op.inputs[1];
        fill = *b;
      } else if (a && !b) {
        v = op.inputs[2];
        fill = *a;
        keep_if_true = false;
      } else {
        return false;
      }
      // Scales collected so far were applied after the Where: they scale the fill as well. A
      // mask collected so far was added after it (eager GPT-2: Where(causal, s, lowest) +
      // padding): the kernels add it after the Where too (mask_after_where), so masked scores
      // are fill + mask as the model computes them.
      fill *= scale;
      mask_after_where = mask >= 0;
      cond = op.inputs[0];
    } else {
      return false;
    }
  }
  if (!qk) return false;
  const auto& pv_op = ir->ops[pv];
  const int out = pv_op.outputs[0];
  for (int t : {qk->inputs[0], qk->inputs[1], pv_op.inputs[1], out}) {
    if (x.Dims(t).size() != rank) return false;  // batch broadcasting stays unfused
  }
  for (int m : {mask, cond}) {
    if (m >= 0 && !Broadcasts(x.Dims(m), score_dims)) return false;
  }
  if (cond >= 0 && ir->values[cond].info.dtype != onnx::TensorProto::BOOL) return false;
  if (mask >= 0 && !IsFloat(ir->values[mask].info.dtype)) return false;
  // Q, K (from K^T: the last two axes swapped) and V as views of what feeds them; scalar
  // scales on the Q and K^T paths join the score's scale (they multiply Q K^T).
  OperandView views[3] = {TraceOperandView(x, qk->inputs[0], true),
                          TraceOperandView(x, qk->inputs[1], true),
                          TraceOperandView(x, pv_op.inputs[1], false)};
  std::vector<int> splits;
  for (auto& view : views) {
    if (view.source < 0) return false;
    fused.insert(fused.end(), view.absorbed.begin(), view.absorbed.end());
    splits.insert(splits.end(), view.splits.begin(), view.splits.end());
    scale *= view.scale;
  }
  if (views[0].head_group != 1) return false;  // query heads are never repeated
  std::swap(views[1].dims[2], views[1].dims[3]);
  std::swap(views[1].strides[2], views[1].strides[3]);
  // The head-merging Transpose after the output, when it is the only reader.
  std::vector<int64_t> out_perm = Identity(rank);
  int result = out;
  if (ir->values[out].kind != ValueKind::kOutput && ir->UseCount(out) == 1) {
    for (size_t i = 0; i < ir->ops.size(); ++i) {
      const IrOp& t = ir->ops[i];
      if (t.removed || t.op_type != "Transpose" || t.inputs.empty() || t.inputs[0] != out) continue;
      out_perm = TransposePerm(t, rank);
      result = t.outputs[0];
      fused.push_back(static_cast<int>(i));
    }
  }
  IrOp op;
  op.name = softmax.name;
  op.op_type = "FusedAttention";
  op.domain = "ortc";
  op.since_version = 1;
  op.inputs = {views[0].source, views[1].source, views[2].source, mask, cond};
  op.outputs = {result};
  op.SetFloatAttr("scale", scale);
  op.SetFloatAttr("fill", fill);
  for (int i = 0; i < 3; ++i) {
    const std::string name(1, "qkv"[i]);
    op.SetIntsAttr(name + "_shape", {views[i].dims.begin(), views[i].dims.end()});
    op.SetIntsAttr(name + "_strides", {views[i].strides.begin(), views[i].strides.end()});
    op.SetIntAttr(name + "_offset", views[i].offset);
    if (views[i].head_group != 1) op.SetIntAttr(name + "_head_group", views[i].head_group);
  }
  op.SetIntsAttr("out_perm", out_perm);
  op.SetIntAttr("keep_if_true", keep_if_true ? 1 : 0);
  if (mask_after_where) op.SetIntAttr("mask_after_where", 1);
  // Shape check through the generator's own rules before committing to the rewrite.
  ir->ops.push_back(op);
  auto desc = OpDescFromIr(*ir, ir->ops.back());
  const bool ok = desc.ok() && codegen::Unsupported(*desc).empty();
  ir->ops.pop_back();
  if (!ok) return false;
  // A Split goes once nothing outside this fusion reads an output of it: the fusion reads the
  // outputs it needs as views, and other outputs may have been read as views already (a
  // RotaryEmbedding's Q and K) or not at all.
  for (int sp : splits) {
    if (std::find(fused.begin(), fused.end(), sp) != fused.end()) continue;
    bool unread = true;
    for (int o : ir->ops[sp].outputs) {
      if (o < 0) continue;
      unread = unread && x.Internal(o);
      for (int r : Readers(*ir, o))
        unread = unread && std::find(fused.begin(), fused.end(), r) != fused.end();
    }
    if (unread) fused.push_back(sp);
  }
  // The new op takes the place of the last fused op (the output's producer), so every reader
  // of the result still comes after it, and every value it reads was read by a fused op before.
  int last = 0;
  for (int f : fused) last = std::max(last, f);
  for (int f : fused) ir->ops[f].removed = true;
  ir->ops[last] = std::move(op);
  return true;
}

}  // namespace

int FuseAttention(SubgraphIr* ir) {
  int fused = 0;
  for (size_t i = 0; i < ir->ops.size(); ++i) {
    const IrOp& op = ir->ops[i];
    if (op.removed || op.op_type != "Softmax") continue;
    if (FuseAt(ir, static_cast<int>(i))) ++fused;
  }
  if (fused > 0) ir->Compact();
  return fused;
}

}  // namespace ortc::backends::cuda
