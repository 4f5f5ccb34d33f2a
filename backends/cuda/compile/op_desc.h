// Builds the code generator's OpDesc (static shapes, dtypes, attributes, constant inputs'
// bytes) from a model node (capability) or a lowering op.
#pragma once

#include "cuda/compile/codegen/kernel_codegen.h"
#include "graph/model.h"
#include "lowering/subgraph_ir.h"

namespace ortc::backends::cuda {

// Needs static shapes (the caller checks). Constant inputs are initializers of the model.
Result<codegen::OpDesc> OpDescFromNode(const graph::Graph& g, const graph::Node& node);
Result<codegen::OpDesc> OpDescFromIr(const lowering::SubgraphIr& ir, const lowering::IrOp& op);

std::vector<int64_t> StaticDims(const graph::TensorInfo& info);

}  // namespace ortc::backends::cuda
