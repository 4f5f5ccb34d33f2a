// A MatMul whose contraction has length 1, [.., M, 1] @ [.., 1, N], computes one product per
// output element: it is a Mul of the same operands with numpy broadcasting (batch axes broadcast
// alike, and each element is the same single rounded product, so the result is bit for bit the
// same). As a Mul it joins the elementwise fusion around it instead of a GEMM launch of its own.
// GroupQueryAttention's expansion places a decode step's new key and value rows in the cache
// this way (a one-hot [L, 1] column times the new [1, H] row), once per cache and layer.
#include <onnx/onnx_pb.h>

#include "cuda/compile/lowering.h"

namespace ortc::backends::cuda {
namespace {

using lowering::IrOp;
using lowering::SubgraphIr;

bool IsFloat(int32_t t) {
  return t == onnx::TensorProto::FLOAT || t == onnx::TensorProto::FLOAT16 ||
         t == onnx::TensorProto::BFLOAT16 || t == onnx::TensorProto::DOUBLE;
}

// Whether a MatMul's operands are [.., M, 1] and [.., 1, N] (both at least 2-D: a 1-D operand
// is promoted and its axis removed again, which a Mul would not do).
bool ContractsOne(const SubgraphIr& ir, const IrOp& op) {
  if (op.inputs.size() != 2 || op.outputs.size() != 1 || op.inputs[0] < 0 || op.inputs[1] < 0 ||
      op.outputs[0] < 0 || !op.attributes.empty())
    return false;
  const auto& a = ir.values[op.inputs[0]].info;
  const auto& b = ir.values[op.inputs[1]].info;
  if (!a.shape.is_static() || !b.shape.is_static() || a.shape.dims.size() < 2 ||
      b.shape.dims.size() < 2 || !IsFloat(a.dtype) || a.dtype != b.dtype)
    return false;
  return a.shape.dims.back().value == 1 && b.shape.dims[b.shape.dims.size() - 2].value == 1;
}

}  // namespace

int MatMulsToOuterProducts(SubgraphIr* ir) {
  int rewritten = 0;
  for (auto& op : ir->ops) {
    if (op.removed || op.op_type != "MatMul" || !op.domain.empty() || !ContractsOne(*ir, op))
      continue;
    op.op_type = "Mul";
    op.since_version = 14;
    ++rewritten;
  }
  return rewritten;
}

}  // namespace ortc::backends::cuda
