// An OrtGraph (ONNX Runtime's view of a model or of the nodes an EP was given) as an ONNX
// ModelProto, so ortc's partitioner and compiler can work on it as on a file.
#pragma once

#include <onnx/onnx_pb.h>

#include "ort_api.h"
#include "ortc/status.h"

namespace ortc::ort_ep {

struct GraphToProtoOptions {
  // Nodes without a name, or with a name another node has, are renamed "ortc_ep_node_<index>"
  // so each proto node maps back to its OrtNode by name (index = position in GetNodes()).
  bool unique_node_names = true;
  // Nodes with subgraphs (If, Loop, Scan) become placeholders "OnnxRuntimeOnly" in domain
  // "ortc.ort_ep" reading the node's inputs and the outer values its subgraphs use: the
  // partitioner sees the dependencies and leaves the node to ONNX Runtime. Without it such a
  // node is an error.
  bool opaque_subgraph_nodes = false;
};

inline constexpr const char* kOpaqueDomain = "ortc.ort_ep";

// One node: name, op, domain, input/output names ("" for omitted ones) and attributes.
Result<onnx::NodeProto> NodeToProto(Ort::ConstNode node);

// Node i of the proto's graph is node i of graph.GetNodes().
Result<onnx::ModelProto> GraphToModelProto(Ort::ConstGraph graph,
                                           const GraphToProtoOptions& options = {});

}  // namespace ortc::ort_ep
