// Cutting tensors into pieces along an axis and joining pieces back: what sequence ops
// (SplitToSequence, ConcatFromSequence) and scans (Loop, Scan outputs and inputs) share.
// Byte copies of whole inner blocks; string tensors copy element by element.
#pragma once

#include <vector>

#include "ortc/status.h"
#include "ortc/tensor.h"

namespace ortc::exec {

// x[..., begin:begin+count, ...] along `axis` (a copy).
Tensor SliceAlong(const Tensor& x, int64_t axis, int64_t begin, int64_t count);
// x[..., index, ...]: the slice with `axis` removed (a copy).
Tensor TakeAlong(const Tensor& x, int64_t axis, int64_t index);
// Joins tensors of equal rank along an existing axis; shapes must agree elsewhere.
Result<Tensor> ConcatAlong(const std::vector<Tensor>& parts, int64_t axis);
// Stacks tensors of one shape along a new axis inserted at `axis` (0..rank).
Result<Tensor> StackAlong(const std::vector<Tensor>& parts, int64_t axis);

}  // namespace ortc::exec
