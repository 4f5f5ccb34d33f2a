// 4-bit integer weights and blocked DequantizeLinear (opset 21), as weight-only quantizers write
// LLMs in the QDQ form (ONNX Runtime's 4-bit quantizer in QDQ mode and others: an int4 or uint4
// weight [K, N] dequantized in blocks along K, then MatMul), rewritten at load into ops ortc's
// runtime and lowerings know:
// - an INT4 / UINT4 initializer becomes its packed bytes (a UINT8 initializer of the same data,
//   external data included) and nodes computing its values as INT8 / UINT8 of its shape: the
//   same integers, which DequantizeLinear reads alike (the runtime holds no sub-byte tensor);
// - a DequantizeLinear with block_size > 0 becomes (x - zero point) * scale in float, its scale
//   and zero point repeated along the blocked axis (last block cut to the axis' length).
// Weights fold at compile time; a float MatMul weight that is such a dequantization is then kept
// at 4 bits on the CPU (MatMulInt4), found by its values as MatMulNBits' are.
#pragma once

#include "graph/model.h"
#include "ortc/status.h"

namespace ortc::graph {

// Whether RewriteFourBitDequantize changes this graph (4-bit initializers, blocked
// DequantizeLinear): a caller running source models on the CPU kernels loads such a model
// through the compiler's loader.
bool HasFourBitOrBlockedDequantize(const onnx::GraphProto& graph);

// Rewrites model->proto's main graph before the graph is built; the DequantizeLinear nodes it
// changed (blocked, or reading 4-bit values) go to model->expanded_nodes. Fails (NotImplemented,
// naming the value or node) for 4-bit tensors other than DequantizeLinear's initializer inputs
// (graph inputs, outputs, other readers) and for blocked DequantizeLinear of a value whose shape is
// not an initializer's.
Status RewriteFourBitDequantize(Model* model);

}  // namespace ortc::graph
