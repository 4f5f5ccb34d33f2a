// CPU lowering pass: a MatMul operand made by a Transpose that swaps its last two axes (an
// attention's K^T, a GQA cache's repeated keys transposed, exporters' x @ w.T) is read
// transposed by the GEMM instead of being copied: MatMul(a, Transpose(b)) becomes
// MatMulTransposed(a, b) with trans_b = 1 (trans_a likewise), and the Transpose goes when nothing
// else reads it. A decode step over a cache of T rows otherwise copies every layer's repeated
// keys each step.
#pragma once

#include "lowering/subgraph_ir.h"

namespace ortc::backends::cpu {

// Returns the number of operands now read transposed.
Result<int> ReadTransposedOperands(lowering::SubgraphIr* ir);

}  // namespace ortc::backends::cpu
