// ortc's own shape rules for ops whose definition changed after opset 17 (see opset_support.h).
#pragma once

#include <onnx/onnx_pb.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace ortc::graph {

struct RuleInputs {
  const onnx::NodeProto* node;
  std::vector<const TensorInfo*> inputs;  // nullptr for omitted inputs
  // Constant integer contents of an input, when known at compile time.
  std::function<std::optional<std::vector<int64_t>>(size_t)> constant_ints;
  // Constant floating-point contents of an input (Resize scales).
  std::function<std::optional<std::vector<double>>(size_t)> constant_floats;
  // Integer contents known at compile time: constants, or shape values propagated through
  // Shape -> Gather -> Concat chains (an Expand's target shape). Unset: constant_ints only.
  std::function<std::optional<std::vector<int64_t>>(size_t)> known_ints;
};

// Returns the output infos, or nullopt when the op has no own rule.
std::optional<std::vector<TensorInfo>> ApplyOwnShapeRule(const RuleInputs& in);

// Numpy-style broadcast of two shapes; unknown where either side is.
Shape BroadcastShapes(const Shape& a, const Shape& b);

}  // namespace ortc::graph
