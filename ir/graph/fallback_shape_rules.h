// ortc's own shape rules for the ops its CPU runtime runs, applied wherever ONNX's inference
// (the linked 1.12 library) leaves an output's type or shape unknown: function ops without an
// inference function (GreaterOrEqual, LessOrEqual), shape inputs ONNX does not propagate
// (Expand, Range), and whole chains downstream of such a gap.
#pragma once

#include <optional>
#include <vector>

#include "graph/own_shape_rules.h"

namespace ortc::graph {

// The outputs' infos as far as the rule can tell (unknown where it cannot), or nullopt when
// ortc has no rule for the op or its inputs are malformed.
std::optional<std::vector<TensorInfo>> ApplyFallbackShapeRule(const RuleInputs& in);

// Completes `known` with what `rule` adds: a type where `known` has none, a shape where its
// rank is unknown, and dims where both have the same rank and `known` has no size.
TensorInfo MergeInfo(const TensorInfo& known, const TensorInfo& rule);

}  // namespace ortc::graph
