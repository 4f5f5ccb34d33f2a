// Shape and type inference over the in-memory graph, node by node in topological order.
// Each node goes through the linked ONNX schema when that is exact for its opset, through
// ortc's own rule for ops that changed after opset 17, or is left as the model declares it.
#pragma once

#include <string>
#include <vector>

#include "graph/model.h"

namespace ortc::graph {

// Fills Value::info for node outputs. Never fails on a node it cannot infer: the output keeps
// the type the model's value_info gives (or stays unknown) and a warning is appended.
void InferShapes(Model* model);

}  // namespace ortc::graph
