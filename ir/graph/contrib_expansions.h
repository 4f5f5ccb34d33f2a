// One function per contrib op (graph/contrib_ops.h): checks the node's form, waits (returns
// without Begin) while something it needs is unknown, writes the replacement through Begin's
// Emitter.
#pragma once

#include <memory>
#include <string>

#include "graph/contrib_emitter.h"

namespace ortc::graph::contrib {

class Expansion {
 public:
  Expansion(std::string prefix, int64_t opset, Names* names)
      : prefix_(std::move(prefix)), opset_(opset), names_(names) {}
  // Starts the replacement, its float constants in `dtype`.
  Emitter& Begin(int32_t dtype) {
    emitter_ = std::make_unique<Emitter>(prefix_, opset_, dtype, names_);
    return *emitter_;
  }
  Emitter* emitter() { return emitter_.get(); }

 private:
  std::string prefix_;
  int64_t opset_;
  Names* names_;
  std::unique_ptr<Emitter> emitter_;
};

// contrib_layers.cpp
Status ExpandGelu(const NodeView& v, Expansion* x);  // Gelu and BiasGelu
Status ExpandFastGelu(const NodeView& v, Expansion* x);
Status ExpandSkipLayerNorm(const NodeView& v, Expansion* x);
Status ExpandEmbedLayerNorm(const NodeView& v, Expansion* x);
Status ExpandSimplifiedLayerNorm(const NodeView& v, Expansion* x);
Status ExpandSkipSimplifiedLayerNorm(const NodeView& v, Expansion* x);

// contrib_rotary.cpp
Status ExpandRotaryEmbedding(const NodeView& v, Expansion* x);
// The rotary rotation of a 4-D x [..., 2 * half] by cos and sin [..., half] (broadcast):
// rotate-half, or adjacent pairs when `interleaved`. Returns the rotated value.
std::string Rotate(Emitter& e, const std::string& x, const std::string& cos, const std::string& sin,
                   int64_t half, bool interleaved);

// contrib_gqa.cpp
Status ExpandGroupQueryAttention(const NodeView& v, Expansion* x);

// contrib_matmul_nbits.cpp
Status ExpandMatMulNBits(const NodeView& v, Expansion* x);

// onnx_attention.cpp: ai.onnx Attention-23/24
Status ExpandOnnxAttention(const NodeView& v, Expansion* x);

// contrib_rotary.cpp: ai.onnx RotaryEmbedding-23
Status ExpandOnnxRotaryEmbedding(const NodeView& v, Expansion* x);

// onnx_layer_ops.cpp: ai.onnx RMSNormalization-23, Swish-24, TensorScatter-24
Status ExpandRmsNormalization(const NodeView& v, Expansion* x);
Status ExpandSwish(const NodeView& v, Expansion* x);
Status ExpandTensorScatter(const NodeView& v, Expansion* x);

// contrib_attention.cpp
Status ExpandAttention(const NodeView& v, Expansion* x);
Status ExpandMultiHeadAttention(const NodeView& v, Expansion* x);

}  // namespace ortc::graph::contrib
