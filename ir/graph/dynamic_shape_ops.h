// Per-op facts for tracing dynamic shapes (dynamic_shapes.h): which inputs' values decide an
// op's output shape, which ops have data-dependent output sizes, and why inference gave up.
#pragma once

#include <string>
#include <vector>

#include "graph/model.h"

namespace ortc::graph {

// Indices of the inputs whose values (not only shapes) decide the node's output shape:
// Reshape's shape, Expand's shape, Slice's starts/ends/axes/steps, Tile's repeats, Pad's pads,
// Resize's scales/sizes, the axes inputs of Squeeze/Unsqueeze/Reduce*... (by op version).
std::vector<size_t> ShapeDeterminingInputs(const Node& node);

// "data-dependent output size (NonZero)" for ops whose output size depends on input values
// (NonZero, Unique, Compress, NonMaxSuppression, StringSplit), else "".
std::string DataDependentShape(const Node& node);

// Why shape inference gave no static output shape for a node whose inputs are all static and
// constant where it matters (or that lost their ranks): no shape rule for the op, a subgraph
// (If: the branch taken; Loop, Scan: the iterations), or the inference warning.
std::string NoShapeReason(const Model& model, const Node& node);

}  // namespace ortc::graph
