// ONNX Runtime's transformer contrib ops (domain com.microsoft, as its transformer optimizer
// writes them), and ai.onnx ops newer than the linked ONNX library, rewritten at load time into
// equivalent subgraphs of older standard ai.onnx ops.
#pragma once

#include <functional>
#include <string>

#include "graph/model.h"
#include "ortc/status.h"

namespace ortc::graph {

// Ops rewritten at load into standard ops of the model's opset: ONNX Runtime's transformer ops
// (com.microsoft Attention, MultiHeadAttention, GroupQueryAttention, SkipLayerNormalization,
// EmbedLayerNormalization, (Skip)SimplifiedLayerNormalization, RotaryEmbedding, MatMulNBits,
// BiasGelu, FastGelu, Gelu), and the ai.onnx ops newer than the linked ONNX library that are
// made of older ones (opset 23's Attention, RMSNormalization and RotaryEmbedding, opset 24's
// Swish and TensorScatter). `opset` is the model's opset of `domain`.
bool IsExpandableContribOp(const std::string& domain, const std::string& op_type, int64_t opset);
bool IsExpandableContribOp(const Node& n);
bool HasExpandableContribOps(const Model& model);

// Replaces every expandable contrib node of the main graph with standard ops of the model's
// ai.onnx opset (11 or newer), named "<node>/<part>"; the node's outputs keep their names.
// Works in rounds: a node is expanded once shape inference knows what its expansion depends on
// (element types, the rank of masks and of MultiHeadAttention's key, head sizes), then
// `rebuild` must re-read model->graph from model->proto and infer shapes again, which tells
// the nodes after it. When no node is ready, the first one is expanded with fallbacks (the
// model's float type, a 3-D key, a head size computed at run time). Forms the op
// documentation allows but ortc does not rewrite (KV cache, packed QKV, rotary embedding...)
// fail with NotImplemented naming the node, the input or attribute, and what to do instead.
// Appends each expanded node to model->expanded_nodes. Deterministic.
Status ExpandContribOps(Model* model, const std::function<Status()>& rebuild);

}  // namespace ortc::graph
