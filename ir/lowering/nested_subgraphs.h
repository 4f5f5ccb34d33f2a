// Subgraph attributes (If branches, Loop/Scan/SequenceMap bodies) lowered into nested
// SubgraphIrs, so the CPU backend stores them as nested programs the runtime executes directly
// instead of re-reading ONNX protos at run time.
#pragma once

#include <onnx/onnx_pb.h>

#include <functional>
#include <map>
#include <string>

#include "lowering/subgraph_ir.h"
#include "ortc/status.h"

namespace ortc::lowering {

// Resolves a name an enclosing scope defines to a value id of that scope's IR.
using OuterScope = std::function<Result<int>(const std::string& name)>;

// Lowers every graph attribute of `node` into op->subgraphs. The outer-scope values the
// subgraphs read are appended to op->inputs after the ONNX inputs (op->explicit_inputs says
// where they start), resolved through `outer`; each nested program's capture list points at
// them. `opsets` is the model's opset per domain ("" = ai.onnx).
Status LowerSubgraphAttributes(const onnx::NodeProto& node,
                               const std::map<std::string, int64_t>& opsets,
                               const OuterScope& outer, IrOp* op);

}  // namespace ortc::lowering
