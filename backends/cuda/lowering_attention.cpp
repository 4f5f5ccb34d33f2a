// Recognises scaled dot-product attention in a lowering IR, as exporters write it, and replaces
// it with one FusedAttention op (codegen/attention_kernels.cpp):
//   MatMul(Q, K^T) -> [Div | Mul by a scalar] -> [Add mask | Where(cond, ., fill)] -> Softmax
//   (last axis) -> MatMul(., V)
// Transposes that only feed Q, K or V (head splitting, K^T) and one after the output (head
// merging) are absorbed as permutations: the kernel reads and writes through strides.
#include <onnx/onnx_pb.h>

#include <numeric>
#include <optional>

#include "cuda/lowering.h"
#include "cuda/lowering_ir_index.h"
#include "cuda/op_desc.h"

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

// Walks up Transposes that feed only this path: returns the source value and the permutation
// through which the logical tensor reads it (logical axis a = source axis perm[a]).
int AbsorbTransposes(const Index& x, int v, std::vector<int64_t>* perm,
                     std::vector<int>* absorbed) {
  while (const IrOp* t = x.SoleProducer(v, "Transpose")) {
    const int src = t->inputs[0];
    const auto p = TransposePerm(*t, perm->size());
    if (p.size() != perm->size() || x.Dims(src).size() != perm->size()) break;
    std::vector<int64_t> composed(perm->size());
    for (size_t a = 0; a < perm->size(); ++a) composed[a] = p[(*perm)[a]];
    *perm = composed;
    absorbed->push_back(x.OpIndex(t));
    v = src;
  }
  return v;
}

bool Broadcasts(const std::vector<int64_t>& mask, const std::vector<int64_t>& scores) {
  if (mask.size() > scores.size()) return false;
  const size_t pad = scores.size() - mask.size();
  for (size_t i = 0; i < mask.size(); ++i) {
    if (mask[i] != 1 && mask[i] != scores[pad + i]) return false;
  }
  return true;
}

// Tries to fuse the attention ending in Softmax op `s`; true when it did.
bool FuseAt(SubgraphIr* ir, int s) {
  const Index x(*ir);
  const IrOp& softmax = ir->ops[s];
  if (softmax.inputs.empty() || softmax.outputs.size() != 1) return false;
  const int probs = softmax.outputs[0];
  const auto score_dims = x.Dims(softmax.inputs[0]);
  const size_t rank = score_dims.size();
  if (rank < 3 || rank > 4) return false;
  int64_t axis = softmax.IntAttr("axis", softmax.since_version < 13 ? 1 : -1);
  if (axis < 0) axis += static_cast<int64_t>(rank);
  if (axis != static_cast<int64_t>(rank) - 1) return false;
  // Softmax -> MatMul(probs, V), the only reader.
  if (ir->values[probs].kind == ValueKind::kOutput || ir->UseCount(probs) != 1) return false;
  int pv = -1;
  for (size_t i = 0; i < ir->ops.size(); ++i) {
    const IrOp& op = ir->ops[i];
    if (!op.removed && op.op_type == "MatMul" && op.inputs.size() == 2 && op.inputs[0] == probs)
      pv = static_cast<int>(i);
  }
  if (pv < 0) return false;
  std::vector<int> fused = {s, pv};
  // Backwards from the Softmax: mask, scale, Q K^T.
  int v = softmax.inputs[0];
  int mask = -1, cond = -1;
  float fill = 0.f, scale = 1.f;
  bool keep_if_true = true;
  if (const IrOp* add = x.SoleProducer(v, "Add"); add && add->inputs.size() == 2) {
    for (int side = 0; side < 2; ++side) {
      const int p = x.producer[add->inputs[side]];
      if (p < 0) continue;
      const std::string& t = ir->ops[p].op_type;
      if (t == "MatMul" || t == "Div" || t == "Mul") {
        mask = add->inputs[1 - side];
        v = add->inputs[side];
        fused.push_back(x.OpIndex(add));
        break;
      }
    }
    if (mask < 0) return false;
  } else if (const IrOp* where = x.SoleProducer(v, "Where"); where && where->inputs.size() == 3) {
    const auto a = x.Scalar(where->inputs[1]), b = x.Scalar(where->inputs[2]);
    if (b && !a) {
      v = where->inputs[1];
      fill = *b;
    } else if (a && !b) {
      v = where->inputs[2];
      fill = *a;
      keep_if_true = false;
    } else {
      return false;
    }
    cond = where->inputs[0];
    fused.push_back(x.OpIndex(where));
  }
  if (const IrOp* div = x.SoleProducer(v, "Div"); div && div->inputs.size() == 2) {
    const auto c = x.Scalar(div->inputs[1]);
    if (!c || *c == 0.f) return false;
    scale = 1.f / *c;
    v = div->inputs[0];
    fused.push_back(x.OpIndex(div));
  } else if (const IrOp* mul = x.SoleProducer(v, "Mul"); mul && mul->inputs.size() == 2) {
    const auto c0 = x.Scalar(mul->inputs[0]), c1 = x.Scalar(mul->inputs[1]);
    if (!c0 && !c1) return false;
    scale = c1 ? *c1 : *c0;
    v = c1 ? mul->inputs[0] : mul->inputs[1];
    fused.push_back(x.OpIndex(mul));
  }
  const IrOp* qk = x.SoleProducer(v, "MatMul");
  if (!qk || qk->inputs.size() != 2) return false;
  fused.push_back(x.OpIndex(qk));
  const auto& pv_op = ir->ops[pv];
  const int out = pv_op.outputs[0];
  for (int t : {qk->inputs[0], qk->inputs[1], pv_op.inputs[1], out}) {
    if (x.Dims(t).size() != rank) return false;  // batch broadcasting stays unfused
  }
  for (int m : {mask, cond}) {
    if (m >= 0 && !Broadcasts(x.Dims(m), score_dims)) return false;
  }
  if (cond >= 0 && ir->values[cond].info.dtype != onnx::TensorProto::BOOL) return false;
  // Q, K (from K^T: the last two axes swapped) and V through the transposes feeding them.
  std::vector<int64_t> q_perm = Identity(rank), v_perm = Identity(rank), k_perm = Identity(rank);
  std::swap(k_perm[rank - 1], k_perm[rank - 2]);
  const int q = AbsorbTransposes(x, qk->inputs[0], &q_perm, &fused);
  const int k = AbsorbTransposes(x, qk->inputs[1], &k_perm, &fused);
  const int vv = AbsorbTransposes(x, pv_op.inputs[1], &v_perm, &fused);
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
  op.inputs = {q, k, vv, mask, cond};
  op.outputs = {result};
  op.SetFloatAttr("scale", scale);
  op.SetFloatAttr("fill", fill);
  op.SetIntsAttr("q_perm", q_perm);
  op.SetIntsAttr("k_perm", k_perm);
  op.SetIntsAttr("v_perm", v_perm);
  op.SetIntsAttr("out_perm", out_perm);
  op.SetIntAttr("keep_if_true", keep_if_true ? 1 : 0);
  // Shape check through the generator's own rules before committing to the rewrite.
  ir->ops.push_back(op);
  auto desc = OpDescFromIr(*ir, ir->ops.back());
  const bool ok = desc.ok() && codegen::Unsupported(*desc).empty();
  ir->ops.pop_back();
  if (!ok) return false;
  // The new op takes the place of the last fused op (the output's producer), so every reader
  // of the result still comes after it.
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
