// Per-op facts for tracing dynamic shapes: shape-determining inputs by op version, data-dependent
// ops, and the fallback reason from the op's shape route or the inference warning.
#include "graph/dynamic_shape_ops.h"

#include <map>

#include "graph/opset_support.h"

namespace ortc::graph {
namespace {

struct ShapeInputs {
  int since = 1;  // the inputs below apply from this op version on (attributes before)
  std::vector<size_t> inputs;
};

const std::map<std::string, ShapeInputs>& Table() {
  static const std::map<std::string, ShapeInputs> t = {
      {"Reshape", {5, {1}}},
      {"Expand", {8, {1}}},
      {"Tile", {6, {1}}},
      {"ConstantOfShape", {9, {0}}},
      {"Range", {11, {0, 1, 2}}},
      {"Slice", {10, {1, 2, 3, 4}}},
      {"Pad", {11, {1, 3}}},
      {"Upsample", {9, {1}}},
      {"OneHot", {9, {1}}},
      {"TopK", {10, {1}}},
      {"Squeeze", {13, {1}}},
      {"Unsqueeze", {13, {1}}},
      {"Split", {13, {1}}},
      {"ReduceSum", {13, {1}}},
      {"ReduceMean", {18, {1}}},
      {"ReduceMax", {18, {1}}},
      {"ReduceMin", {18, {1}}},
      {"ReduceProd", {18, {1}}},
      {"ReduceL1", {18, {1}}},
      {"ReduceL2", {18, {1}}},
      {"ReduceLogSum", {18, {1}}},
      {"ReduceLogSumExp", {18, {1}}},
      {"ReduceSumSquare", {18, {1}}},
      {"CenterCropPad", {18, {1, 2}}},
      {"Col2Im", {18, {1, 2}}},
      {"DFT", {17, {1, 2}}},
      {"STFT", {17, {1, 3}}},
      {"AffineGrid", {20, {1}}},
      {"MaxUnpool", {9, {2}}},
      {"BlackmanWindow", {17, {0}}},
      {"HannWindow", {17, {0}}},
      {"HammingWindow", {17, {0}}},
      {"MelWeightMatrix", {17, {0, 1}}},
  };
  return t;
}

}  // namespace

std::vector<size_t> ShapeDeterminingInputs(const Node& node) {
  if (!node.domain.empty()) return {};
  if (node.op_type == "Resize") {
    // Opset 10: (X, scales); 11 on: (X, roi, scales, sizes); roi does not change the shape.
    return node.since_version == 10 ? std::vector<size_t>{1} : std::vector<size_t>{2, 3};
  }
  auto it = Table().find(node.op_type);
  if (it == Table().end()) return {};
  // An unknown version (0) counts as the newest definition.
  if (node.since_version != 0 && node.since_version < it->second.since) return {};
  return it->second.inputs;
}

std::string DataDependentShape(const Node& node) {
  if (!node.domain.empty()) return "";
  const std::string& t = node.op_type;
  if (t == "NonZero" || t == "Unique" || t == "Compress" || t == "NonMaxSuppression" ||
      t == "StringSplit")
    return "data-dependent output size (" + t + ")";
  return "";
}

std::string NoShapeReason(const Model& model, const Node& node) {
  const std::string op = (node.domain.empty() ? "" : node.domain + ".") + node.op_type;
  const OpResolution r = ResolveOp(node.domain, node.op_type, node.opset);
  if (!r.exists)
    return "no shape inference for op " + op + " (opset " + std::to_string(node.opset) + ")";
  if (r.route == ShapeRoute::kUnknown)
    return "no shape rule for " + op + " at opset " + std::to_string(node.opset);
  if (node.op_type == "If") return "output shape depends on the branch taken at run time (If)";
  if (node.op_type == "Loop" || node.op_type == "Scan")
    return "output shape depends on the iterations run (" + node.op_type + ")";
  if (node.has_subgraphs) return "output shape set by its subgraph at run time";
  const std::string prefix = "shape inference for node '" + node.name + "' (";
  for (const auto& w : model.warnings) {
    if (w.rfind(prefix, 0) != 0) continue;
    const size_t colon = w.find("): ", prefix.size());
    return "shape inference failed: " + (colon == std::string::npos ? w : w.substr(colon + 3));
  }
  return "shape inference could not derive the output shape";
}

}  // namespace ortc::graph
