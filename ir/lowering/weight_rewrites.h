// Rewrites of constant weights that backends ask for before lowering: BatchNormalization folded
// into the preceding Conv (the CPU and CUDA backends), and Gemm's B pre-transposed so that a GEMM
// reads B as K x N row-major (the CPU kernels' layout).
#pragma once

#include "lowering/subgraph_ir.h"

namespace ortc::lowering {

// Conv(W[, B]) -> BatchNormalization(scale, bias, mean, var), float32, all constant, Conv's
// output read only by the BN: W and B are rescaled and the BN disappears. Returns the count.
Result<int> FoldBatchNormIntoConv(SubgraphIr* ir);

// Gemm with a constant 2-D B and transB=1: B is stored transposed and transB becomes 0.
Result<int> PretransposeGemmWeights(SubgraphIr* ir);

}  // namespace ortc::lowering
