// CUDA lowering of one partition group: precision rewrite, pattern selection (library calls,
// fused elementwise kernels, generated ops, views), buffers with layouts, and the memory plan.
// Order: ApplyPrecision -> LowerToPlan -> (GenerateKernels, kernels.h) -> FinalizePlan.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cuda/compile/options.h"
#include "cuda/compile/plan.h"
#include "lowering/subgraph_ir.h"

namespace ortc::backends::cuda {

// How the group's ops are grouped into steps (lowering_patterns.cpp).
struct Unit {
  enum Kind { kConv, kGemm, kFused, kOp, kView } kind = kOp;
  std::vector<int> ops;   // IR op indices, in order; ops[0] is the main op (conv, gemm, op)
  int bias = -1, z = -1;  // conv / gemm: the value used as bias; the residual (conv z, gemm C)
  fb::Activation activation = fb::Activation::None;
  float clip_min = 0, clip_max = 0;  // activation Clip (conv only)
  int out = -1;                      // conv / gemm: the value the step writes
};

// Library calls first (conv + bias + residual + Relu or ReLU6-style Clip; gemm + bias +
// Relu/Gelu), then DAGs of
// elementwise ops, views and single generated ops. Units are in a valid execution order.
Result<std::vector<Unit>> SelectUnits(const lowering::SubgraphIr& ir);

// Formulas exporters write out op by op, replaced by the op they compute (lowering_formulas.cpp):
// GELU (erf or tanh form, recognised by evaluation) -> Gelu; the LayerNorm decomposition
// (ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div, * gamma + beta) -> LayerNormalization.
// RMSNorm (x * rsqrt(mean(x^2) + eps), * weight, float Casts around it) -> RMSNormalization
// (RecogniseRmsNorm). Then LayerNormalization(a + b) of two activations ->
// AddLayerNormalization (the sum stored too when read elsewhere), except where the Add is a
// GEMM's residual.
struct FormulaStats {
  int gelu = 0, layer_norm = 0, rms_norm = 0, add_layer_norm = 0;
};
FormulaStats RecogniseFormulas(lowering::SubgraphIr* ir);

// RMSNorm written out op by op (lowering_rmsnorm.cpp): Pow(x, 2) or Mul(x, x), ReduceMean over
// the last axis, + eps (a scalar constant > 0), the reciprocal square root in any of the
// exporters' spellings, x * it (or x / sqrt), optionally * a constant [C] weight and wrapped in
// float Casts -> one RMSNormalization (axis -1, epsilon; scale absent without a weight).
// Returns how many; marks the replaced ops removed (the caller compacts).
int RecogniseRmsNorm(lowering::SubgraphIr* ir);

// MatMuls reading one activation with constant [K, N_i] weights (each with a constant bias, or
// none) merged into one MatMul (+ bias) and a Split (lowering_projections.cpp): BERT's Q, K and
// V projections become one GEMM. Returns how many merges.
Result<int> MergeSiblingProjections(lowering::SubgraphIr* ir);

// Rotary position embeddings, q * cos + rotate_half(q) * sin (also on the first rotary_dim
// columns only, the rest passed through), recognised by evaluating the Slice/Split/Neg/Concat/
// Mul/Add/Sub subgraph around each candidate output, become one RotaryEmbedding op that reads
// q through a strided view of what feeds it (lowering_rotary.cpp). Returns how many. Runs
// before FuseAttention, whose Q and K are then the rotated tensors.
int FuseRotaryEmbeddings(lowering::SubgraphIr* ir);

// Scaled dot-product attention (MatMul, scale, mask, Softmax, MatMul and the head transposes
// around them) replaced by one FusedAttention op per match (lowering_attention.cpp); returns
// how many. Runs before ApplyPrecision.
int FuseAttention(lowering::SubgraphIr* ir);

// Each FusedAttention op replaced by StridedView copies, MatMul Q K^T (alpha = scale),
// AttentionSoftmax, MatMul P V and the head-merging Transpose (lowering_attention_gemm.cpp):
// attention on cuBLASLt's GEMMs (tensor cores at fp16/bf16). Returns how many. Attention of a
// few query rows (at most codegen::kDecodeMaxRows: a generation step reading its cache) stays one
// FusedAttention op, which runs as the decode kernel: counted in *decode_kept.
int LowerAttentionToGemms(lowering::SubgraphIr* ir, int* decode_kept);

// Each decode-shaped FusedAttention (at most codegen::kDecodeMaxRows query rows) that
// codegen::DecodeKeySplits splits over its keys becomes DecodeAttentionPartial + its merge
// (lowering_decode_split.cpp); returns how many. Runs after ApplyPrecision: the runs' records
// are fp32.
int SplitDecodeAttention(lowering::SubgraphIr* ir);

// A decode-shaped FusedAttention (or DecodeAttentionPartial) reading all of a RotaryEmbedding's
// output, which nothing else reads, takes the rotary's input view and tables and rotates q as
// it loads it (lowering_decode_rotary.cpp); returns how many. Runs after SplitDecodeAttention.
int AbsorbQueryRotary(lowering::SubgraphIr* ir);

// MatMuls of [.., M, 1] by [.., 1, N] become the Mul they compute (lowering_outer_products.cpp),
// so the elementwise fusion takes them; returns how many. Runs after the attention passes.
int MatMulsToOuterProducts(lowering::SubgraphIr* ir);

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
