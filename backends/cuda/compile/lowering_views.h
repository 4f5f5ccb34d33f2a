// Operand views for fused ops: what a chain of data-movement ops (Transpose, Reshape, Flatten,
// Squeeze, Unsqueeze, Expand, Slice, Split, Identity) makes of a source tensor, found by walking
// element indices back through the chain and fitting a strided address to them, not by
// recognising one exporter's spelling. Used by the attention fusion for Q, K and V: GQA's
// repeated key/value heads (Unsqueeze + Expand + Reshape) become a head group.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "cuda/compile/lowering_ir_index.h"

namespace ortc::backends::cuda {

// address(b, h, r, c) = offset + b * strides[0] + (h / head_group) * strides[1] +
//                       r * strides[2] + c * strides[3], in elements of the source.
struct OperandView {
  int source = -1;                           // the value read
  std::array<int64_t, 4> dims{}, strides{};  // logical [batch, heads, rows, cols]
  int64_t offset = 0, head_group = 1;
  // Movement ops the view replaces, read by nothing else (Splits listed in `splits`). Links the
  // view reads through that other ops also read are in neither list: they stay, and dead-op
  // removal drops them once nothing reads them.
  std::vector<int> absorbed;
  std::vector<int> splits;
  float scale = 1.f;  // product of the scalar Mul/Div links absorbed (allow_scale)
};

// The view through which `operand` (rank 2..4, read as right-aligned in 4-D) reads the source of
// the longest chain of movement ops feeding it that a strided address with a head group
// describes (links read by other ops too are read through, see `absorbed`). With
// `allow_scale`, scalar Mul/Div links on the way are absorbed into `scale` (they commute with
// data movement). The chain may be empty (the operand itself, contiguous).
OperandView TraceOperandView(const IrIndex& x, int operand, bool allow_scale);

}  // namespace ortc::backends::cuda
