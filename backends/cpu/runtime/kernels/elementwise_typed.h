// Typed fast paths for the elementwise ops that mask subgraphs run over every attention score
// (exporters build causal and padding masks from comparisons, And/Or, Casts): the elements in
// their own C++ types instead of a double round trip through a callback per element. Each
// answers false when it does not cover the case, and the general kernel runs.
#pragma once

#include "cpu_kernel/kernel_context.h"

namespace ortc::exec {

enum class CompareOp { kEqual, kLess, kGreater, kLessOrEqual, kGreaterOrEqual };
enum class LogicOp { kAnd, kOr, kXor };

// Two operands of one type (float, double, int32, int64), broadcast, into bool.
bool CompareTyped(KernelContext& c, CompareOp op);
// Two bool operands, broadcast, into bool.
bool LogicTyped(KernelContext& c, LogicOp op);
// Casts whose C++ conversion is ONNX's: any of bool, integers, float and double to float or
// double, to bool (x != 0), and from bool to any of them. Not float to integer (ONNX leaves
// out-of-range values undefined; the general path keeps its own rule).
bool CastTyped(const Tensor& x, DataType to, Tensor* y);

}  // namespace ortc::exec
