// Builds the in-memory Graph from a GraphProto: SSA and reference checks, implicit inputs of
// subgraphs, topological sort (nodes may be stored out of order), initializer sizes.
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <string>

#include "graph/graph.h"
#include "ortc/status.h"

namespace ortc::graph {

// Fills `info` from a tensor type (dtype, and the shape when declared); other types leave it.
void SetInfoFromType(const onnx::TypeProto& type, TensorInfo* info);

// Fills `graph` from `proto` and re-orders proto->node topologically. `opsets` gives the
// model's opset per domain. External data is not resolved here (see external_data.h).
Status BuildGraph(onnx::GraphProto* proto, const std::map<std::string, int64_t>& opsets,
                  Graph* graph);

}  // namespace ortc::graph
