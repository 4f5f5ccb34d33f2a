// Internal to codegen: one emitter per op family, each in its own file; kernel_codegen.cpp
// dispatches to them by op type.
#pragma once

#include "cuda/compile/codegen/kernel_codegen.h"

namespace ortc::backends::cuda::codegen {

// prelude.cpp
std::string Prelude();

// elementwise_kernels.cpp: elementwise math, activations, comparisons, logic and bitwise ops,
// IsNaN/IsInf, Where, Cast, fusion.
bool IsElementwiseOp(const std::string& op_type);
std::string ElementwiseUnsupported(const OpDesc& op);
Result<KernelSource> EmitFusedElementwise(const std::string& name, const FusedGroup& group);

// normalization_kernels.cpp: Softmax, LogSoftmax, LayerNormalization, InstanceNormalization,
// BatchNormalization (inference, when not folded into a Conv).
bool IsNormalizationOp(const std::string& op_type);
Result<KernelSource> EmitNormalization(const std::string& name, const OpDesc& op);

// reduction_kernels.cpp: Reduce*, GlobalAveragePool, GlobalMaxPool.
bool IsReductionOp(const std::string& op_type);
Result<KernelSource> EmitReduction(const std::string& name, const OpDesc& op);

// data_movement_kernels.cpp: Transpose, Concat, Slice, Gather, Split, Expand, Tile,
// DepthToSpace, SpaceToDepth, Pad, Resize.
bool IsDataMovementOp(const std::string& op_type);
Result<KernelSource> EmitDataMovement(const std::string& name, const OpDesc& op);

// pooling_kernels.cpp: MaxPool, AveragePool.
bool IsPoolingOp(const std::string& op_type);
Result<KernelSource> EmitPooling(const std::string& name, const OpDesc& op);

// attention_kernels.cpp: FusedAttention, an op lowering forms (lowering_attention.cpp), not an
// ONNX op. Inputs: q, k, v (float, rank 2-4, read through the permutations q_perm, k_perm,
// v_perm: logical axis a is input axis perm[a]; logical q [.., rows, d], k [.., keys, d],
// v [.., keys, dv]), an optional additive float mask and an optional bool condition (both
// broadcast over the [.., rows, keys] scores). Attributes: scale (float), keep_if_true and fill
// (Where: a score whose condition differs from keep_if_true becomes fill), out_perm (the output
// is Transpose(logical [.., rows, dv], out_perm)). Instead of a permutation, q, k and v may each
// come as an explicit strided view of their input: q_shape (logical [batch, heads, rows, d]),
// q_strides, q_offset (and k_..., v_...), for slices of a fused QKV projection; k_head_group /
// v_head_group (default 1): head h reads source head h / group (GQA's repeated kv heads).
// Output: softmax(scale * q k^T + mask) v.
// Split over the keys (decode_attention_kernels.cpp): DecodeAttentionPartial takes
// FusedAttention's inputs and attributes plus key_splits, and writes float
// [batch, heads, rows, key_splits, dv + 2] (per run of keys: max, sum of exp, unnormalised
// output); DecodeAttentionMerge (attributes key_splits, out_perm) turns those into the output.
// The decode forms (at most kDecodeMaxRows query rows) may rotate q as they load it: inputs 5
// and 6 are cos and sin (RotaryEmbedding's tables, broadcast over [batch, heads, rows, width],
// width q_rotary_dim or half of it), attribute q_rotary_dim (lowering_decode_rotary.cpp).
// IsAttentionOp / AttentionUnsupported / EmitAttention also cover these and the attention_parts
// ops.
bool IsAttentionOp(const std::string& op_type);
std::string AttentionUnsupported(const OpDesc& op);
Result<KernelSource> EmitAttention(const std::string& name, const OpDesc& op);

// attention_parts_kernels.cpp: attention on GEMMs (lowering_attention_gemm.cpp). AttentionSoftmax
// (inputs scores, optional float mask and bool cond broadcast over them; attributes scale, fill,
// keep_if_true as FusedAttention's): softmax of Where(cond == keep_if_true, scale * s + mask,
// fill) over the last axis, all -inf rows zero. StridedView (attributes shape, strides, offset,
// head_group; 4-D logical view of its input): the view copied contiguous.
bool IsAttentionPartOp(const std::string& op_type);
std::string AttentionPartUnsupported(const OpDesc& op);
Result<KernelSource> EmitAttentionPart(const std::string& name, const OpDesc& op);

// indexing_kernels.cpp: GatherND, GatherElements, ScatterND, ScatterElements (and Scatter),
// Trilu; indices read on the device, out-of-range ones clamped (see the file's comment).
bool IsIndexingOp(const std::string& op_type);
Result<KernelSource> EmitIndexing(const std::string& name, const OpDesc& op);
std::string IndexingUnsupported(const OpDesc& op);

// rotary_kernels.cpp: RotaryEmbedding, an op lowering forms (lowering_rotary.cpp), not the ONNX
// operator of that name: x read through a strided view (x_shape, x_strides, x_offset,
// x_head_group), cos and sin broadcast over it, rotary_dim; see the file's comment.
bool IsRotaryOp(const std::string& op_type);
std::string RotaryUnsupported(const OpDesc& op);
Result<KernelSource> EmitRotary(const std::string& name, const OpDesc& op);

// grouped_conv_kernels.cpp: GroupedConv, an op lowering forms from a depthwise or narrow grouped
// Conv (lowering_grouped_conv.cpp), not an ONNX op; see the file's comment for its inputs.
bool IsGroupedConvOp(const std::string& op_type);
std::string GroupedConvUnsupported(const OpDesc& op);
Result<KernelSource> EmitGroupedConv(const std::string& name, const OpDesc& op);

// scan_kernels.cpp: CumSum.
bool IsScanOp(const std::string& op_type);
Result<KernelSource> EmitScan(const std::string& name, const OpDesc& op);

// Family-specific attribute/shape limits ("" when fine).
std::string NormalizationUnsupported(const OpDesc& op);
std::string ReductionUnsupported(const OpDesc& op);
std::string DataMovementUnsupported(const OpDesc& op);
std::string PoolingUnsupported(const OpDesc& op);
std::string ScanUnsupported(const OpDesc& op);

}  // namespace ortc::backends::cuda::codegen
