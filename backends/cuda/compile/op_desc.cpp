// OpDesc construction for capability queries and lowering.
#include "cuda/compile/op_desc.h"

#include <onnx/onnx_pb.h>

namespace ortc::backends::cuda {

std::vector<int64_t> StaticDims(const graph::TensorInfo& info) {
  return info.shape.Sizes();
}

Result<codegen::OpDesc> OpDescFromNode(const graph::Graph& g, const graph::Node& node) {
  codegen::OpDesc d;
  d.op_type = node.op_type;
  d.since_version = node.since_version;
  if (node.proto)
    d.attributes.assign(node.proto->attribute().begin(), node.proto->attribute().end());
  for (int v : node.inputs) {
    if (v < 0) {
      d.inputs.push_back({});
      d.constants.push_back(std::nullopt);
      continue;
    }
    const auto& value = g.values[v];
    d.inputs.push_back({value.info.dtype, StaticDims(value.info)});
    std::optional<std::string> bytes;
    if (value.initializer >= 0) {
      const auto& init = g.initializers[value.initializer];
      // Small constants only: attribute-like inputs (shapes, starts, scales, bounds).
      if (init.byte_size <= 4096) {
        auto src = lowering::InitializerBytes(init);
        if (!src.ok()) return src.status();
        auto all = src->ReadAll();
        if (!all.ok()) return all.status();
        bytes = **all;
      }
    }
    d.constants.push_back(std::move(bytes));
  }
  for (int v : node.outputs) {
    if (v < 0) {
      d.outputs.push_back({});
      continue;
    }
    d.outputs.push_back({g.values[v].info.dtype, StaticDims(g.values[v].info)});
  }
  return d;
}

Result<codegen::OpDesc> OpDescFromIr(const lowering::SubgraphIr& ir, const lowering::IrOp& op) {
  codegen::OpDesc d;
  d.op_type = op.op_type;
  d.since_version = op.since_version;
  d.attributes = op.attributes;
  for (int v : op.inputs) {
    if (v < 0) {
      d.inputs.push_back({});
      d.constants.push_back(std::nullopt);
      continue;
    }
    const auto& value = ir.values[v];
    d.inputs.push_back({value.info.dtype, StaticDims(value.info)});
    std::optional<std::string> bytes;
    if (value.kind == lowering::ValueKind::kWeight && value.bytes && value.bytes->size() <= 4096) {
      auto all = value.bytes->ReadAll();
      if (!all.ok()) return all.status();
      bytes = **all;
    }
    d.constants.push_back(std::move(bytes));
  }
  for (int v : op.outputs) {
    if (v < 0) {
      d.outputs.push_back({});
      continue;
    }
    d.outputs.push_back({ir.values[v].info.dtype, StaticDims(ir.values[v].info)});
  }
  return d;
}

}  // namespace ortc::backends::cuda
