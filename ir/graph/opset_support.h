// Which ONNX versions ortc reads, and how each op's shapes are inferred at a given opset.
// The ONNX library we link (1.12) knows opsets up to 17; exporters write up to 21. For every op
// that changed after 17 this table says whether the opset-17 schema still infers it correctly
// (type-only changes) or whether ortc's own rule must be used.
#pragma once

#include <cstdint>
#include <string>

namespace ortc::graph {

inline constexpr int64_t kMaxIrVersion = 10;
inline constexpr int64_t kMaxDefaultOpset = 21;
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
