// CPU lowering passes that rewrite weights into the form the CPU kernels consume:
// BatchNormalization folded into the preceding Conv, and Gemm's B pre-transposed so every GEMM
// reads B as K x N row-major.
#pragma once

#include "lowering/subgraph_ir.h"

namespace ortc::backends::cpu {

// Conv(W[, B]) -> BatchNormalization(scale, bias, mean, var), float32, all constant, Conv's
// output read only by the BN: W and B are rescaled and the BN disappears. Returns the count.
Result<int> FoldBatchNormIntoConv(lowering::SubgraphIr* ir);

// Gemm with a constant 2-D B and transB=1: B is stored transposed and transB becomes 0.
Result<int> PretransposeGemmWeights(lowering::SubgraphIr* ir);

}  // namespace ortc::backends::cpu
