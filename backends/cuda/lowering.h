// CUDA lowering of one partition group: precision rewrite, pattern selection (library calls,
// fused elementwise kernels, generated ops, views), buffers with layouts, and the memory plan.
// Order: ApplyPrecision -> LowerToPlan -> (GenerateKernels, kernels.h) -> FinalizePlan.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cuda/options.h"
#include "cuda/plan.h"
#include "lowering/subgraph_ir.h"

namespace ortc::backends::cuda {

// How the group's ops are grouped into steps (lowering_patterns.cpp).
struct Unit {
  enum Kind { kConv, kGemm, kFused, kOp, kView } kind = kOp;
  std::vector<int> ops;   // IR op indices, in order; ops[0] is the main op (conv, gemm, op)
  int bias = -1, z = -1;  // conv / gemm: the value used as bias, conv: the residual
  fb::Activation activation = fb::Activation::None;
  float clip_min = 0, clip_max = 0;  // activation Clip (conv only)
  int out = -1;  // conv / gemm: the value the step writes
};

// Library calls first (conv + bias + residual + Relu or ReLU6-style Clip; gemm + bias +
// Relu/Gelu), then DAGs of
// elementwise ops, views and single generated ops. Units are in a valid execution order.
Result<std::vector<Unit>> SelectUnits(const lowering::SubgraphIr& ir);

// fp16/bf16: float weights converted (round-to-nearest-even), float activations retyped, Cast
// ops at the boundary so program inputs and outputs keep the model's types. No-op for fp32.
Status ApplyPrecision(lowering::SubgraphIr* ir, Precision precision);

// Units -> steps and buffers. Tensor-core precisions put 4-D convolutions in NHWC (filters
// packed KRSC); elementwise groups (the boundary casts included) and ops with channels-last
// kernels keep activations NHWC (lowering_layouts.h), and activations are transposed only
// where a consumer needs the other layout.
Result<Plan> LowerToPlan(const lowering::SubgraphIr& ir, const CudaOptions& options,
                         std::map<std::string, int>* stats);

// Drops weight slots no step reads and places arena buffers (lifetimes over steps).
void FinalizePlan(Plan* plan);

}  // namespace ortc::backends::cuda
