// Internal to codegen: how a FusedAttention op reads its operands (attention_kernels.cpp), shared
// by the kernels that compute it (the tiled kernel there, the decode kernel in
// decode_attention_kernels.cpp).
#pragma once

#include <array>
#include <string>

#include "cuda/compile/codegen/kernel_codegen.h"

namespace ortc::backends::cuda::codegen::attention {

// Inputs of FusedAttention (attributes documented in emitters.h); the decode forms may also take
// the rotary tables of their query (kQCos, kQSin).
constexpr size_t kQ = 0, kK = 1, kV = 2, kMask = 3, kCond = 4, kQCos = 5, kQSin = 6;
constexpr int64_t kMaxHeadDim = 128;

// Logical 4-D view [batch, heads, rows, cols] of a source tensor (a permutation, an explicit
// strided view or a broadcast); lower ranks get leading unit axes with stride 0.
struct View4 {
  std::array<int64_t, 4> dims{1, 1, 1, 1}, strides{0, 0, 0, 0};
  int64_t offset = 0;  // elements before the view's first element
  // Heads h read head h / head_group of the source (GQA's repeated key/value heads).
  int64_t head_group = 1;
};

struct Shapes {
  View4 q, k, v, out, mask, cond;
  int64_t head_dim = 0, value_dim = 0, rows = 0, keys = 0;
  // The decode kernel's runs of keys: key_splits runs of key_chunk keys (the last may be
  // shorter); 1 run of all keys for FusedAttention.
  int64_t key_splits = 1, key_chunk = 0;
  // A rotary query (inputs kQCos, kQSin; q_rotary_dim > 0): q is read rotated, as
  // RotaryEmbedding computes it (rotary_kernels.cpp), with tables of table_width columns
  // (q_rotary_dim or half of it) broadcast over [batch, heads, rows, table_width].
  int64_t q_rotary_dim = 0, table_width = 0;
  View4 q_cos, q_sin;
};

// Whether optional input i is given.
bool Present(const OpDesc& op, size_t i);
// Every operand's view, checked to chain (q [b, h, rows, d], k [b, h, keys, d], ...).
Result<Shapes> ShapesOf(const OpDesc& op);
// Kernel text: the element (row, col) of a view whose (b, h) base is `base`.
std::string Index(const std::string& base, const View4& v, const std::string& row,
                  const std::string& col);
// Kernel text: the offset of the (b, h) slice of a view (h / head_group for repeated heads),
// with `b` and `h` the kernel's variables.
std::string BaseOf(const View4& v);

// Kernel text applying the op's additive mask and Where condition to the score `var` of query
// row `row` and key `key` (expressions), in the model's order (the mask before the Where, or
// after it with mask_after_where); each statement on its own line after `indent`.
std::string MaskScore(const OpDesc& op, const Shapes& s, const std::string& var,
                      const std::string& row, const std::string& key, const std::string& indent);

// The decode kernel (decode_attention_kernels.cpp): a few query rows against many keys, in one
// block per row (FusedAttention) or per run of keys (DecodeAttentionPartial); and the runs'
// merge (DecodeAttentionMerge).
Result<KernelSource> EmitDecodeAttention(const std::string& name, const OpDesc& op,
                                         const Shapes& s);
Result<KernelSource> EmitDecodeAttentionMerge(const std::string& name, const OpDesc& op,
                                              const Shapes& s);

}  // namespace ortc::backends::cuda::codegen::attention
