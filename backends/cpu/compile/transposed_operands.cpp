// MatMul operands transposed by a Transpose, read transposed instead.
#include "cpu/compile/transposed_operands.h"

#include <vector>

namespace ortc::backends::cpu {
namespace {

using lowering::IrOp;
using lowering::SubgraphIr;

// The Transpose producing v when it swaps only v's last two axes and this MatMul is its one
// reader (so removing it cannot change another op's input); nullptr otherwise.
IrOp* LastTwoAxesSwap(SubgraphIr* ir, int v) {
  IrOp* t = ir->Producer(v);
  if (!t || t->op_type != "Transpose" || !t->domain.empty() || t->inputs.size() != 1 ||
      t->inputs[0] < 0 || ir->RewritableReaders(v).size() != 1)
    return nullptr;
  std::vector<int64_t> perm = t->IntsAttr("perm");
  if (perm.empty()) {  // no perm: all axes reversed, a swap of the last two only at rank 2
    const auto& shape = ir->values[t->inputs[0]].info.shape;
    if (!shape.rank_known || shape.dims.size() != 2) return nullptr;
    perm = {1, 0};
  }
  const int64_t rank = static_cast<int64_t>(perm.size());
  if (rank < 2) return nullptr;
  for (int64_t i = 0; i < rank - 2; ++i)
    if (perm[i] != i) return nullptr;
  return perm[rank - 2] == rank - 1 && perm[rank - 1] == rank - 2 ? t : nullptr;
}

}  // namespace

Result<int> ReadTransposedOperands(SubgraphIr* ir) {
  int read = 0;
  for (size_t i = 0; i < ir->ops.size(); ++i) {
    IrOp& op = ir->ops[i];
    if (op.removed || op.op_type != "MatMul" || !op.domain.empty() || op.inputs.size() != 2 ||
        op.inputs[0] < 0 || op.inputs[1] < 0)
      continue;
    IrOp* ta = LastTwoAxesSwap(ir, op.inputs[0]);
    IrOp* tb = op.inputs[1] != op.inputs[0] ? LastTwoAxesSwap(ir, op.inputs[1]) : nullptr;
    if (!ta && !tb) continue;
    op.op_type = "MatMulTransposed";
    op.since_version = 1;
    op.SetIntAttr("trans_a", ta ? 1 : 0);
    op.SetIntAttr("trans_b", tb ? 1 : 0);
    for (auto [t, slot] : {std::pair{ta, 0}, std::pair{tb, 1}}) {
      if (!t) continue;
      op.inputs[slot] = t->inputs[0];
      t->removed = true;  // its one reader now reads its input
      ++read;
    }
  }
  if (read > 0) ir->Compact();
  return read;
}

}  // namespace ortc::backends::cpu
