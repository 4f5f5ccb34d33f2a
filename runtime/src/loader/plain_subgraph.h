// Plain ONNX nodes (a source model, or the nodes a ctx model keeps): their attributes, Constant
// nodes, and subgraph attributes, which are loaded once into nested ExecGraphs exactly as the CPU
// backend's nested programs are (inputs: the subgraph's own, then the outer values it reads), so
// If/Loop/Scan run the same way whether a model was compiled or not.
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <functional>
#include <map>
#include <string>

#include "cpu_kernel/exec_graph.h"

namespace ortc::loader {

// Resolves a name of the enclosing scope to its value id there (creating it when needed).
using EnclosingScope = std::function<Result<int>(const std::string& name)>;

// The tensor a Constant node defines.
Result<Tensor> ConstantNodeValue(const onnx::NodeProto& node, const std::filesystem::path* dir);

// Fills op->attrs from the node's attributes. Each graph attribute becomes a nested ExecGraph;
// the outer values its subgraph reads are appended to op->inputs (resolved through `outer`) and
// op->explicit_inputs marks where they start. `opsets`: the model's opset per domain.
Status AddNodeAttributes(const onnx::NodeProto& node, const std::filesystem::path* dir,
                         const std::map<std::string, int64_t>& opsets, const EnclosingScope& outer,
                         exec::ExecOp* op);

}  // namespace ortc::loader
