// The CUDA capability table: library ops and views with their limits, then every op the
// kernel generator covers (asked through codegen::Unsupported with the node's static shapes).
// Shape arithmetic (Shape, ConstantOfShape, Range...) deliberately stays on the CPU: it is
// host-side metadata and moving it to the device would only add copies.
#include "cuda/compile/capability.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <set>
#include <unordered_map>

#include "base/element_types.h"
#include "base/shape_limit.h"
#include "capability_table.h"
#include "cuda/compile/codegen/kernel_codegen.h"
#include "cuda/compile/op_desc.h"
#include "graph/host_eval.h"
#include "lowering/constant_folding.h"

namespace ortc::backends::cuda {
namespace {

using onnx::TensorProto;
const std::vector<int32_t> kFloats = {TensorProto::FLOAT, TensorProto::FLOAT16,
                                      TensorProto::BFLOAT16};

bool IsConstant(const graph::Graph& g, int v) {
  return v >= 0 && g.values[v].initializer >= 0;
}

std::vector<int64_t> Ints(const graph::Node& n, const std::string& name) {
  const auto* a = FindAttribute(n, name);
  if (!a) return {};
  return {a->ints().begin(), a->ints().end()};
}

std::string ConvLimits(const graph::Graph& g, const graph::Node& n) {
  const auto x = StaticDims(g.values[n.inputs[0]].info);
  if (x.size() != 3 && x.size() != 4) {
    return n.op_type + " on rank " + std::to_string(x.size()) +
           " input: only 1-D and 2-D convolutions are lowered";
  }
  if (n.inputs.size() < 2 || !IsConstant(g, n.inputs[1]))
    return n.op_type + " with a non-constant filter is not lowered";
  if (n.inputs.size() > 2 && n.inputs[2] >= 0 && !IsConstant(g, n.inputs[2]))
    return n.op_type + " with a non-constant bias is not lowered";
  const std::string auto_pad = StringAttribute(n, "auto_pad", "NOTSET");
  const size_t spatial = x.size() - 2;
  if (n.op_type == "ConvTranspose") {
    if (auto_pad != "NOTSET" && auto_pad != "VALID")
      return "ConvTranspose with auto_pad " + auto_pad + " is not lowered";
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    const auto w = StaticDims(g.values[n.inputs[1]].info);
    const auto y = StaticDims(g.values[n.outputs[0]].info);
    auto strides = Ints(n, "strides"), dilations = Ints(n, "dilations");
    strides.resize(spatial, 1);
    dilations.resize(spatial, 1);
    for (size_t i = 0; i < spatial; ++i) {
      const int64_t total =
          (y[2 + i] - 1) * strides[i] + (w[2 + i] - 1) * dilations[i] + 1 - x[2 + i];
      if (total > 0 && total % 2 != 0)
        return "Conv with auto_pad " + auto_pad + " needs asymmetric pads (cuDNN takes symmetric)";
    }
  }
  const auto pads = Ints(n, "pads");
  for (size_t i = 0; i < pads.size() / 2; ++i) {
    if (pads[i] != pads[i + pads.size() / 2])
      return n.op_type + " with asymmetric pads is not lowered (cuDNN takes symmetric pads)";
  }
  return "";
}

std::string MatMulLimits(const graph::Graph& g, const graph::Node& n) {
  const auto a = StaticDims(g.values[n.inputs[0]].info);
  const auto b = StaticDims(g.values[n.inputs[1]].info);
  const auto y = StaticDims(g.values[n.outputs[0]].info);
  if (a.size() < 2 || b.size() < 2) return n.op_type + " with a 1-D operand is not lowered";
  if (n.op_type == "Gemm") {
    if (n.inputs.size() > 2 && n.inputs[2] >= 0) {
      const auto c = StaticDims(g.values[n.inputs[2]].info);
      const int64_t m = y[0], nn = y[1];
      const bool vec = (c == std::vector<int64_t>{nn} || c == std::vector<int64_t>{1, nn});
      // A vector C becomes cuBLASLt's bias, which the epilogue adds unscaled: only beta = 1.
      const auto* beta = FindAttribute(n, "beta");
      const bool unit_beta = !beta || beta->f() == 1.0f;
      if (!(c == std::vector<int64_t>{m, nn}) && !(vec && IsConstant(g, n.inputs[2])))
        return "Gemm with C of shape other than a constant [N] or [M, N] is not lowered";
      if (!(c == std::vector<int64_t>{m, nn}) && !unit_beta)
        return "Gemm with a vector C and beta != 1 is not lowered (the bias epilogue is unscaled)";
    }
    return "";
  }
  auto elements = [](const std::vector<int64_t>& d, size_t tail) {
    int64_t e = 1;
    for (size_t i = 0; i + tail < d.size(); ++i) e *= d[i];
    return e;
  };
  const int64_t batch = elements(y, 2), ba = elements(a, 2), bb = elements(b, 2);
  if ((ba != batch && ba != 1) || (bb != batch && bb != 1))
    return "MatMul batch broadcasting other than 1-vs-N is not lowered";
  return "";
}

// BatchNormalization is taken when it folds into the Conv before it (constant parameters, the
// Conv's output read by it alone), else when the generator has a kernel for it.
std::string BatchNormLimits(const graph::Graph& g, const graph::Node& n) {
  if (IntAttribute(n, "training_mode", 0) != 0) return "BatchNormalization in training mode";
  bool params = n.inputs.size() == 5;
  for (size_t i = 1; i < n.inputs.size(); ++i) params = params && IsConstant(g, n.inputs[i]);
  const auto& x = g.values[n.inputs[0]];
  if (params && x.producer >= 0 && x.consumers.size() == 1 && !x.is_graph_output &&
      g.nodes[x.producer].op_type == "Conv" && g.nodes[x.producer].inputs.size() >= 2 &&
      IsConstant(g, g.nodes[x.producer].inputs[1])) {
    return "";
  }
  if (!codegen::HasKernel("BatchNormalization"))
    return "BatchNormalization that does not fold into a Conv (no kernel generator yet)";
  auto desc = OpDescFromNode(g, n);
  return desc.ok() ? codegen::Unsupported(*desc) : desc.status().message();
}

std::string DropoutLimits(const graph::Graph& g, const graph::Node& n) {
  if (n.outputs.size() > 1 && n.outputs[1] >= 0) return "Dropout's mask output is not lowered";
  if (n.inputs.size() > 2 && n.inputs[2] >= 0 && !IsConstant(g, n.inputs[2]))
    return "Dropout with a run-time training_mode is not lowered";
  // A constant training_mode must be false: the kernel generator refuses training mode, and a
  // refusal here keeps the node on the CPU instead of failing the compile.
  auto desc = OpDescFromNode(g, n);
  return desc.ok() ? codegen::Unsupported(*desc) : desc.status().message();
}

CapabilityTable BuildTable() {
  CapabilityTable t;
  t.RequireKnownRanks(true);
  t.Add({"Conv", "ConvTranspose"}, OpCapability{.dtypes = kFloats, .check = ConvLimits});
  t.Add({"MatMul", "Gemm"}, OpCapability{.dtypes = kFloats, .check = MatMulLimits});
  t.Add({"BatchNormalization"}, OpCapability{.dtypes = kFloats, .check = BatchNormLimits});
  // Views: an alias of the input's bytes (a copy when the view is a graph output).
  t.Add({"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"}, OpCapability{});
  t.Add({"Dropout"}, OpCapability{.check = DropoutLimits});
  return t;
}

// Small integer vectors are shape arithmetic (Shape -> Slice -> Concat -> Reshape chains):
// the CPU computes them; a device round trip would cost more than the op.
bool IsIntVector(const graph::Graph& g, int v) {
  if (v < 0) return false;
  const auto& info = g.values[v].info;
  const bool integer = info.dtype == TensorProto::INT64 || info.dtype == TensorProto::INT32;
  return integer && info.shape.rank_known && info.shape.dims.size() <= 1;
}

bool IsDataVectorUncached(const graph::Graph& g, int v, std::unordered_map<int, bool>* seen,
                          int depth);

// Whether a 0-D or 1-D integer value is data rather than shape arithmetic: a graph input (a
// length per row, such as GroupQueryAttention's seqlens_k) or computed from one or from a
// tensor of rank 2 or more (a mask's row sums), never from a Shape or Size. Shape arithmetic
// stays on the CPU (folded at static shapes); data is device work like any other.
bool IsDataVector(const graph::Graph& g, int v, std::unordered_map<int, bool>* seen,
                  int depth = 0) {
  const auto& value = g.values[v];
  if (value.initializer >= 0 || depth > 32) return false;
  // Each value once: a chain that reads a value twice (x + x) would otherwise double the walk
  // at every step.
  if (auto it = seen->find(v); it != seen->end()) return it->second;
  const bool data = IsDataVectorUncached(g, v, seen, depth);
  (*seen)[v] = data;
  return data;
}

bool IsDataVectorUncached(const graph::Graph& g, int v, std::unordered_map<int, bool>* seen,
                          int depth) {
  const auto& value = g.values[v];
  if (value.producer < 0) return true;  // a graph input
  const graph::Node& p = g.nodes[value.producer];
  if (p.op_type == "Shape" || p.op_type == "Size" || p.op_type == "Range" ||
      p.op_type == "ConstantOfShape" || !p.domain.empty() || p.has_subgraphs)
    return false;
  bool data = false;
  for (int in : p.inputs) {
    if (in < 0 || g.values[in].initializer >= 0) continue;
    const auto& shape = g.values[in].info.shape;
    if (!IsIntVector(g, in)) {
      data = data || (shape.rank_known && shape.dims.size() >= 2);
      continue;
    }
    if (!IsDataVector(g, in, seen, depth + 1)) return false;
    data = true;
  }
  return data;
}

bool IsShapeVector(const graph::Graph& g, const graph::Node& node) {
  std::unordered_map<int, bool> seen;
  auto shape_vector = [&](int v) { return IsIntVector(g, v) && !IsDataVector(g, v, &seen); };
  return (!node.inputs.empty() && shape_vector(node.inputs[0])) ||
         (!node.outputs.empty() && shape_vector(node.outputs[0]));
}

// "" when every input and output has a static shape, else the refusal naming the first
// dynamic dimension.
std::string DynamicShape(const graph::Graph& g, const graph::Node& node) {
  for (const auto& list : {node.inputs, node.outputs}) {
    for (int v : list) {
      if (v < 0) continue;
      const auto& shape = g.values[v].info.shape;
      if (!shape.rank_known) continue;  // the table's rank rule reports it
      for (const auto& d : shape.dims) {
        if (d.known()) continue;
        return "dynamic shape (dim '" + (d.symbol.empty() ? std::string("?") : d.symbol) +
               "'): CUDA kernels are specialized to static shapes; fix it with --input-shape";
      }
    }
  }
  return "";
}

// "" when the node's sizes are ones the CUDA code generator and libraries are written for, else
// the refusal (the node then runs on the CPU, whose kernels check such inputs one by one):
// every tensor within the runtime's 2^40 bound, the data input and the outputs not empty (an
// empty MatMul operand divided the GEMM setup by 0; optional inputs such as Resize's roi are
// legitimately empty), and every integer attribute within 32 bits (generated kernels write them
// as int literals; hostile pads, kernels or dilations overflowed the host arithmetic), except
// Slice-1's starts and ends, which exporters write as INT64_MAX.
std::string OutsideLimits(const graph::Graph& g, const graph::Node& node) {
  auto check = [&](int v, bool data) -> std::string {
    if (v < 0) return "";
    const auto& shape = g.values[v].info.shape;
    if (!shape.is_static()) return "";
    std::vector<int64_t> dims;
    for (const auto& d : shape.dims) dims.push_back(d.value);
    if (!exec::ShapeWithinLimit(dims))
      return "tensor " + g.values[v].name + " has more than 2^40 elements";
    if (data && std::find(dims.begin(), dims.end(), 0) != dims.end())
      return "tensor " + g.values[v].name + " is empty: empty tensors run on the CPU";
    return "";
  };
  for (size_t k = 0; k < node.inputs.size(); ++k) {
    if (std::string why = check(node.inputs[k], k == 0); !why.empty()) return why;
  }
  for (int v : node.outputs) {
    if (std::string why = check(v, true); !why.empty()) return why;
  }
  if (!node.proto) return "";
  constexpr int64_t kLimit = (int64_t{1} << 31) - 1;
  for (const auto& a : node.proto->attribute()) {
    if (node.op_type == "Slice" && (a.name() == "starts" || a.name() == "ends")) continue;
    bool within = a.type() != onnx::AttributeProto::INT || (a.i() >= -kLimit && a.i() <= kLimit);
    for (int64_t v : a.ints()) within = within && v >= -kLimit && v <= kLimit;
    if (!within) return "attribute " + a.name() + " has a value beyond 32 bits";
  }
  return "";
}

int64_t StaticBytes(const graph::TensorInfo& info) {  // -1 when unknown or past 2^40
  int64_t bytes = ElementBits(info.dtype) / 8;
  for (int64_t d : StaticDims(info)) bytes = d >= 0 && bytes <= (int64_t{1} << 40) ? bytes * d : -1;
  return info.shape.rank_known && StaticDims(info).size() == info.shape.dims.size() ? bytes : -1;
}

// The bytes of the initializers node's result is computed from, each counted once: what
// lowering::FoldLimit allows the result to grow to.
int64_t SourceBytes(const graph::Graph& g, const graph::Node& node) {
  std::set<int> initializers, visited;
  std::vector<const graph::Node*> stack = {&node};
  while (!stack.empty()) {
    const graph::Node* n = stack.back();
    stack.pop_back();
    for (int v : n->inputs) {
      if (v < 0 || !visited.insert(v).second) continue;
      if (IsConstant(g, v)) {
        initializers.insert(v);
      } else if (g.values[v].producer >= 0) {
        stack.push_back(&g.nodes[g.values[v].producer]);
      }
    }
  }
  int64_t total = 0;
  for (int v : initializers) total += std::max<int64_t>(0, StaticBytes(g.values[v].info));
  return total;
}

// Whether a node computes only from initializers (directly or through nodes that do) with an op
// the host evaluator folds, into a static result within the group compile's constant folding
// limit (lowering/constant_folding.h): weight preprocessing such as a 4-bit weight's nibbles
// unpacked and dequantized (MatMulNBits' expansion), which the compile turns into one constant
// whatever its element types. Graph-level folding leaves such chains alone past 64 KiB.
bool FoldsAtCompileTime(const graph::Graph& g, const graph::Node& node,
                        std::unordered_map<const graph::Node*, bool>* seen, int depth = 0) {
  if (auto it = seen->find(&node); it != seen->end()) return it->second;
  bool folds = depth < 32 && node.domain.empty() && !node.has_subgraphs &&
               graph::HostEvaluable(node.op_type) && !node.inputs.empty();
  for (size_t i = 0; folds && i < node.inputs.size(); ++i) {
    const int v = node.inputs[i];
    if (v < 0 || IsConstant(g, v)) continue;
    const int producer = g.values[v].producer;
    folds = producer >= 0 && FoldsAtCompileTime(g, g.nodes[producer], seen, depth + 1);
  }
  for (size_t i = 0; folds && i < node.outputs.size(); ++i) {
    if (node.outputs[i] < 0) continue;
    // As lowering::FoldConstants decides: moving an initializer's values keeps the plain limit.
    bool moves_model_weight = lowering::MovesValuesOnly(node.op_type);
    for (size_t j = 0; j < node.inputs.size() && moves_model_weight; ++j) {
      if (j > 0 && node.op_type != "Concat") break;  // shapes, indices, pads
      moves_model_weight = node.inputs[j] < 0 || IsConstant(g, node.inputs[j]);
    }
    const int64_t bytes = StaticBytes(g.values[node.outputs[i]].info);
    folds = bytes > 0 && (bytes <= lowering::kMaxFoldBytes ||
                          bytes <= lowering::FoldLimit(SourceBytes(g, node), moves_model_weight));
  }
  (*seen)[&node] = folds;
  return folds;
}

NodeSupport CudaSupportsOwn(const graph::Graph& g, const graph::Node& node);

}  // namespace

NodeSupport CudaSupports(const graph::Graph& g, const graph::Node& node) {
  NodeSupport own = CudaSupportsOwn(g, node);
  if (own.supported) return own;
  // A node CUDA would refuse still joins its group when the compile folds it away.
  std::unordered_map<const graph::Node*, bool> seen;
  if (FoldsAtCompileTime(g, node, &seen)) return NodeSupport::Yes();
  return own;
}

namespace {

NodeSupport CudaSupportsOwn(const graph::Graph& g, const graph::Node& node) {
  static const CapabilityTable table = BuildTable();
  if (!node.domain.empty())
    return NodeSupport::No("op " + node.domain + "." + node.op_type + " is not supported");
  if (node.op_type == "Shape" || node.op_type == "ConstantOfShape" || node.op_type == "Range" ||
      node.op_type == "Size") {
    return NodeSupport::No("shape arithmetic stays on the CPU");
  }
  if (node.op_type == "If")
    return NodeSupport::No(
        "control flow runs on the CPU; when the condition is fixed (--input-value for a scalar "
        "input such as a sample rate), the taken branch is inlined and CUDA can take its nodes");
  if (node.op_type == "Loop" || node.op_type == "Scan" || node.op_type == "SequenceMap")
    return NodeSupport::No("control flow (" + node.op_type + ") runs on the CPU");
  if (node.op_type == "RNN" || node.op_type == "GRU" || node.op_type == "LSTM")
    return NodeSupport::No("recurrent layers (" + node.op_type +
                           ") run on the CPU: the CUDA backend has no cuDNN RNN or generated "
                           "recurrent kernel yet");
  const bool generated = codegen::HasKernel(node.op_type);
  if (!table.Has(node.op_type) && !generated)
    return NodeSupport::No("op " + node.op_type + " is not supported");
  if (IsShapeVector(g, node))
    return NodeSupport::No("shape arithmetic (1-D integer tensor) stays on the CPU");
  if (node.has_subgraphs) return NodeSupport::No("nodes with subgraphs run on the CPU");
  if (std::string why = DynamicShape(g, node); !why.empty()) return NodeSupport::No(why);
  if (std::string why = OutsideLimits(g, node); !why.empty()) return NodeSupport::No(why);
  if (table.Has(node.op_type)) return table.Check(g, node);
  for (int v : node.inputs) {
    if (v >= 0 && !g.values[v].info.shape.rank_known)
      return NodeSupport::No("input " + g.values[v].name + " has an unknown rank");
  }
  auto desc = OpDescFromNode(g, node);
  if (!desc.ok()) return NodeSupport::No(desc.status().message());
  if (std::string why = codegen::Unsupported(*desc); !why.empty()) return NodeSupport::No(why);
  return NodeSupport::Yes();
}

}  // namespace

}  // namespace ortc::backends::cuda
