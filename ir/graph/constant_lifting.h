// Turns Constant nodes of the main graph into initializers, so every weight of the model,
// however the exporter wrote it, is an initializer (PaddlePaddle's exporter, for one, writes all
// weights as Constant nodes). Partitioning, weight accounting and packing then see one form.
#pragma once

#include <onnx/onnx_pb.h>

namespace ortc::graph {

// Returns how many nodes were lifted. Constants whose output is a graph output, and those
// holding sparse or string values, stay nodes.
int LiftConstantsToInitializers(onnx::GraphProto* graph);

}  // namespace ortc::graph
