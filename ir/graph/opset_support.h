// Which ONNX versions ortc reads, and how each op's shapes are inferred at a given opset.
// The ONNX library we link (1.12) knows opsets up to 17; exporters write up to 24 (PyTorch's
// exporter writes the opset-23 Attention op for scaled_dot_product_attention). For every op that
// changed after 17 this table says whether the opset-17 schema still infers it correctly
// (type-only changes), whether ortc's own rule must be used, or whether the op is one ortc
// expands into older ops at load (Attention, RMSNormalization, RotaryEmbedding, Swish,
// TensorScatter: graph/contrib_ops.h).
#pragma once

#include <cstdint>
#include <string>

namespace ortc::graph {

// IR 11 and 12 (ONNX 1.18, 1.19) add element types ortc refuses where they occur (float4e2m1,
// float8e8m0) and multi-device fields it ignores.
inline constexpr int64_t kMaxIrVersion = 12;
inline constexpr int64_t kMaxDefaultOpset = 24;
inline constexpr int64_t kMaxMlOpset = 3;
// Newest opset of the default domain that the linked ONNX library's schemas describe.
inline constexpr int64_t kOnnxLibraryMaxOpset = 17;

enum class ShapeRoute {
  kOnnxSchema,  // the linked ONNX schema (at min(opset, 17)) infers this op correctly
  kOwnRule,     // ortc's own inference rule (op changed or appeared after opset 17)
  kUnknown,     // no inference: outputs keep whatever the model's value_info says
};

struct OpResolution {
  bool exists = false;    // the op is defined in its domain at this opset
  int since_version = 0;  // version of the definition in effect (0 when not known)
  ShapeRoute route = ShapeRoute::kUnknown;
};

// `domain` is "" (or "ai.onnx") for the default domain.
OpResolution ResolveOp(const std::string& domain, const std::string& op_type, int64_t opset);

bool IsDefaultDomain(const std::string& domain);

}  // namespace ortc::graph
