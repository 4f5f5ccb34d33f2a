// CPU lowering pass that fuses a convolution's epilogue into it: Conv -> [Add residual] ->
// [activations and scalar affine steps]* becomes one FusedConv (inputs X, W, B, residual;
// attributes "activations" and "activation_params"; x * clip(x + 3, 0, 6) / 6 counts as
// HardSwish), which the runtime hands to oneDNN as post-ops, so the convolution's
// result is written once instead of being read and rewritten by each following op.
#pragma once

#include "lowering/subgraph_ir.h"

namespace ortc::backends::cpu {

struct FusionCounts {
  int residual_adds = 0;  // Adds folded into a convolution as its residual
  int activations = 0;    // activations folded into a convolution
  int affine_steps = 0;   // Mul / Add / Sub / Div by a constant scalar folded into one
};

// Fuses every float Conv (spatial rank 1-3) whose result only feeds the next step of the chain.
Result<FusionCounts> FuseConvEpilogues(lowering::SubgraphIr* ir);

}  // namespace ortc::backends::cpu
