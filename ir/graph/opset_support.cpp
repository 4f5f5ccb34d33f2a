// Version table for ops that changed in opsets 18..24 (facts from the ONNX operator changelog).
#include "graph/opset_support.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <map>
#include <vector>

namespace ortc::graph {
namespace {

struct LaterVersions {
  std::vector<int> versions;  // since-versions after 17, ascending
  // True when the opset-17 schema (or, for new ops, none) cannot infer the newer versions.
  bool own_rule;
  // True when ortc has no rule at all for the versions after 17 (shapes left unknown).
  bool no_rule = false;
};

// Ops whose definition changed after opset 17. own_rule=false means the change only widened
// types or added values that do not affect output shapes and element types.
const std::map<std::string, LaterVersions>& LaterVersionTable() {
  static const std::map<std::string, LaterVersions> table = {
      {"Acos", {{22}, false}},
      {"Acosh", {{22}, false}},
      {"AffineGrid", {{20}, true, true}},
      {"Asin", {{22}, false}},
      {"Asinh", {{22}, false}},
      {"Atan", {{22}, false}},
      {"Atanh", {{22}, false}},
      {"Attention", {{23, 24}, true, true}},  // expanded at load (graph/contrib_ops.h)
      {"AveragePool", {{19, 22}, true}},      // dilations
      {"Bernoulli", {{22}, false}},
      {"BitwiseAnd", {{18}, true}},
      {"BitwiseNot", {{18}, true}},
      {"BitwiseOr", {{18}, true}},
      {"BitwiseXor", {{18}, true}},
      {"Cast", {{19, 21, 23, 24}, false}},
      {"CastLike", {{19, 21, 23, 24}, false}},
      {"CenterCropPad", {{18}, true, true}},
      {"Col2Im", {{18}, true, true}},
      {"Constant", {{19, 21, 23, 24}, false}},
      {"ConstantOfShape", {{20, 21, 23, 24}, false}},
      {"Conv", {{22}, false}},
      {"ConvTranspose", {{22}, false}},
      {"Cos", {{22}, false}},
      {"Cosh", {{22}, false}},
      {"DFT", {{20}, true, true}},
      {"DeformConv", {{19, 22}, true, true}},
      {"DequantizeLinear",
       {{19, 21, 23, 24}, true}},  // output type: the scale's, or output_dtype (23)
      {"Det", {{22}, false}},
      {"Dropout", {{22}, false}},
      {"Elu", {{22}, false}},
      {"Equal", {{19}, false}},
      {"EyeLike", {{22}, false}},
      {"Flatten", {{21, 23, 24}, false}},
      {"GRU", {{22}, false}},
      {"Gelu", {{20}, true}},
      {"GlobalAveragePool", {{22}, false}},
      {"GlobalLpPool", {{22}, false}},
      {"GlobalMaxPool", {{22}, false}},
      {"GridSample", {{20, 22}, true, true}},
      {"GroupNormalization", {{18, 21}, true}},
      {"HardSigmoid", {{22}, false}},
      {"HardSwish", {{22}, false}},
      {"Identity", {{19, 21, 23, 24}, false}},
      {"If", {{19, 21, 23, 24}, false}},
      {"ImageDecoder", {{20}, true, true}},
      {"InstanceNormalization", {{22}, false}},
      {"IsInf", {{20}, false}},
      {"IsNaN", {{20}, false}},
      {"LSTM", {{22}, false}},
      {"Loop", {{19, 21, 23, 24}, false}},
      {"LpNormalization", {{22}, false}},
      {"LpPool", {{18, 22}, true}},  // ceil_mode
      {"MaxPool", {{22}, false}},
      {"MaxRoiPool", {{22}, false}},
      {"MaxUnpool", {{22}, false}},
      {"Mish", {{18, 22}, true}},
      {"Multinomial", {{22}, false}},
      {"NegativeLogLikelihoodLoss", {{22}, false}},
      {"OptionalGetElement", {{18}, true, true}},
      {"OptionalHasElement", {{18}, true, true}},
      {"Pad", {{18, 19, 21, 23, 24}, true}},  // axes input
      {"QLinearMatMul", {{21}, false}},
      {"QuantizeLinear", {{19, 21, 23, 24}, true}},  // output_dtype, block_size
      {"RMSNormalization", {{23}, true, true}},      // expanded at load (graph/contrib_ops.h)
      {"RNN", {{22}, false}},
      {"RandomNormal", {{22}, false}},
      {"RandomNormalLike", {{22}, false}},
      {"RandomUniform", {{22}, false}},
      {"RandomUniformLike", {{22}, false}},
      {"ReduceL1", {{18}, true}},  // axes moved from attribute to input
      {"ReduceL2", {{18}, true}},
      {"ReduceLogSum", {{18}, true}},
      {"ReduceLogSumExp", {{18}, true}},
      {"ReduceMax", {{18, 20}, true}},
      {"ReduceMean", {{18}, true}},
      {"ReduceMin", {{18, 20}, true}},
      {"ReduceProd", {{18}, true}},
      {"ReduceSumSquare", {{18}, true}},
      {"RegexFullMatch", {{20}, true, true}},
      {"Reshape", {{19, 21, 23, 24}, false}},
      {"Resize", {{18, 19}, true}},  // axes, keep_aspect_ratio_policy, antialias
      {"RoiAlign", {{22}, false}},
      {"RotaryEmbedding", {{23}, true, true}},  // expanded at load (graph/contrib_ops.h)
      {"Round", {{22}, false}},
      {"Scan", {{19, 21, 23, 24}, false}},
      {"ScatterElements", {{18}, false}},
      {"ScatterND", {{18}, false}},
      {"Selu", {{22}, false}},
      {"Shape", {{19, 21, 23, 24}, false}},
      {"Sin", {{22}, false}},
      {"Sinh", {{22}, false}},
      {"Size", {{19, 21, 23, 24}, false}},
      {"Softplus", {{22}, false}},
      {"Softsign", {{22}, false}},
      {"Split", {{18}, true}},  // num_outputs
      {"SplitToSequence", {{24}, false}},
      {"Squeeze", {{21, 23, 24}, false}},
      {"StringConcat", {{20}, true, true}},
      {"StringSplit", {{20}, true, true}},
      {"Swish", {{24}, true, true}},  // expanded at load (graph/contrib_ops.h)
      {"Tan", {{22}, false}},
      {"TensorScatter", {{24}, true, true}},  // expanded at load (graph/contrib_ops.h)
      {"ThresholdedRelu", {{22}, false}},
      {"TopK", {{24}, false}},
      {"Transpose", {{21, 23, 24}, false}},
      {"Unsqueeze", {{21, 23, 24}, false}},
  };
  return table;
}

}  // namespace

bool IsDefaultDomain(const std::string& domain) {
  return domain.empty() || domain == "ai.onnx";
}

OpResolution ResolveOp(const std::string& domain, const std::string& op_type, int64_t opset) {
  OpResolution r;
  const bool default_domain = IsDefaultDomain(domain);
  const std::string onnx_domain = default_domain ? "" : domain;
  const int lib_opset =
      static_cast<int>(default_domain ? std::min(opset, kOnnxLibraryMaxOpset) : opset);
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(op_type, lib_opset, onnx_domain);
  if (schema && !schema->Deprecated()) {
    r.exists = true;
    r.since_version = schema->SinceVersion();
    r.route = ShapeRoute::kOnnxSchema;
  }
  if (!default_domain || opset <= kOnnxLibraryMaxOpset) return r;

  auto it = LaterVersionTable().find(op_type);
  if (it == LaterVersionTable().end()) return r;  // unchanged since 17: the schema is exact
  int newest = 0;
  for (int v : it->second.versions) {
    if (v <= opset) newest = v;
  }
  if (newest == 0) return r;  // changes are newer than the model's opset
  r.exists = true;
  r.since_version = newest;
  if (it->second.no_rule) {
    r.route = ShapeRoute::kUnknown;
  } else if (it->second.own_rule) {
    r.route = ShapeRoute::kOwnRule;
  } else {
    r.route = ShapeRoute::kOnnxSchema;
  }
  return r;
}

}  // namespace ortc::graph
