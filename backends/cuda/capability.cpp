// The CUDA capability table: ops of CNNs and transformers, float types, known ranks.
// Shape arithmetic (Shape, ConstantOfShape, Range...) deliberately stays on the CPU: it is
// host-side metadata and moving it to the device would only add copies.
#include "cuda/capability.h"

#include <onnx/onnx_pb.h>

#include "capability_table.h"

namespace ortc::backends::cuda {
namespace {

using onnx::TensorProto;
const std::vector<int32_t> kFloats = {TensorProto::FLOAT, TensorProto::FLOAT16,
                                      TensorProto::BFLOAT16};
const std::vector<int32_t> kFloatsAndInts = {TensorProto::FLOAT, TensorProto::FLOAT16,
                                             TensorProto::BFLOAT16, TensorProto::INT32,
                                             TensorProto::INT64};
const std::vector<int32_t> kAnyNumeric = {
    TensorProto::FLOAT, TensorProto::FLOAT16, TensorProto::BFLOAT16, TensorProto::INT32,
    TensorProto::INT64, TensorProto::INT8,    TensorProto::UINT8,    TensorProto::BOOL};

std::string SpatialRank1To3(const graph::Graph& g, const graph::Node& n) {
  const auto& shape = g.values[n.inputs[0]].info.shape;
  if (shape.rank_known && (shape.dims.size() < 3 || shape.dims.size() > 5)) {
    return n.op_type + " on rank " + std::to_string(shape.dims.size()) +
           " input: only 1-D to 3-D spatial data is supported";
  }
  return "";
}

std::string ResizeModes(const graph::Graph&, const graph::Node& n) {
  const std::string mode = StringAttribute(n, "mode", "nearest");
  if (mode != "nearest" && mode != "linear") return "Resize mode '" + mode + "' is not supported";
  const std::string ctm = StringAttribute(n, "coordinate_transformation_mode", "half_pixel");
  if (ctm == "tf_crop_and_resize")
    return "Resize coordinate mode tf_crop_and_resize is not supported";
  if (IntAttribute(n, "antialias", 0) != 0) return "Resize with antialias is not supported";
  return "";
}

std::string PadModes(const graph::Graph&, const graph::Node& n) {
  const std::string mode = StringAttribute(n, "mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") {
    return "Pad mode '" + mode + "' is not supported";
  }
  return "";
}

std::string PoolLimits(const graph::Graph& g, const graph::Node& n) {
  if (IntAttribute(n, "storage_order", 0) != 0)
    return "MaxPool with column-major storage_order is not supported";
  if (n.outputs.size() > 1 && n.outputs[1] >= 0) return "MaxPool's Indices output is not supported";
  return SpatialRank1To3(g, n);
}

CapabilityTable BuildTable() {
  CapabilityTable t;
  t.RequireKnownRanks(true);
  const OpCapability floats{.dtypes = kFloats};
  t.Add({"Conv", "ConvTranspose"}, OpCapability{.dtypes = kFloats, .check = SpatialRank1To3});
  t.Add({"MatMul", "Gemm", "BatchNormalization", "LayerNormalization", "InstanceNormalization",
         "Softmax", "LogSoftmax", "GlobalAveragePool", "GlobalMaxPool"},
        floats);
  t.Add({"MaxPool", "AveragePool"}, OpCapability{.dtypes = kFloats, .check = PoolLimits});
  // Elementwise math and activations: fused into generated kernels.
  t.Add({"Relu",  "LeakyRelu", "Sigmoid",    "Tanh",     "HardSigmoid", "HardSwish", "Gelu",
         "Elu",   "Selu",      "Softplus",   "Softsign", "PRelu",       "Erf",       "Exp",
         "Log",   "Sqrt",      "Reciprocal", "Sin",      "Cos",         "Floor",     "Ceil",
         "Round", "Clip",      "Pow",        "Mish"},
        floats);
  t.Add({"Add", "Sub", "Mul", "Div", "Abs", "Neg", "Min", "Max", "Sign"},
        OpCapability{.dtypes = kFloatsAndInts});
  t.Add({"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"},
        OpCapability{.dtypes = kFloatsAndInts});
  t.Add({"Where", "Not", "And", "Or", "Cast", "Identity", "Dropout"},
        OpCapability{.dtypes = kAnyNumeric});
  t.Add({"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2",
         "ReduceSumSquare"},
        floats);
  // Data movement.
  t.Add({"Transpose", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Concat", "Slice", "Gather",
         "Split", "Expand", "Tile", "DepthToSpace", "SpaceToDepth"},
        OpCapability{.dtypes = kAnyNumeric});
  t.Add({"Resize"}, OpCapability{.dtypes = kFloats, .check = ResizeModes});
  t.Add({"Pad"}, OpCapability{.dtypes = kFloats, .check = PadModes});
  return t;
}

// Small integer vectors are shape arithmetic (Shape -> Slice -> Concat -> Reshape chains):
// the CPU computes them; a device round trip would cost more than the op.
bool IsShapeVector(const graph::Graph& g, const graph::Node& node) {
  auto is_int_vector = [&](int v) {
    if (v < 0) return false;
    const auto& info = g.values[v].info;
    const bool integer = info.dtype == TensorProto::INT64 || info.dtype == TensorProto::INT32;
    return integer && info.shape.rank_known && info.shape.dims.size() <= 1;
  };
  return (!node.inputs.empty() && is_int_vector(node.inputs[0])) ||
         (!node.outputs.empty() && is_int_vector(node.outputs[0]));
}

class Cuda final : public Backend {
 public:
  std::string_view name() const override { return "cuda"; }
  std::string_view ep_source() const override { return "ortc.cuda"; }
  std::string_view status_line() const override {
    return "capability table only: decides placement; code generation comes with the CUDA backend";
  }
  NodeSupport Supports(const graph::Graph& g, const graph::Node& node) const override {
    static const CapabilityTable table = BuildTable();
    if (node.domain.empty() && (node.op_type == "Shape" || node.op_type == "ConstantOfShape" ||
                                node.op_type == "Range" || node.op_type == "Size")) {
      return NodeSupport::No("shape arithmetic stays on the CPU");
    }
    if (table.Has(node.op_type) && IsShapeVector(g, node)) {
      return NodeSupport::No("shape arithmetic (1-D integer tensor) stays on the CPU");
    }
    return table.Check(g, node);
  }
};

}  // namespace

const Backend& CudaBackend() {
  static const Cuda backend;
  return backend;
}

}  // namespace ortc::backends::cuda
