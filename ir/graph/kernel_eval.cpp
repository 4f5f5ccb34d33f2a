// Folding through the CPU runtime's kernels: a one-op ExecGraph whose inputs are constants. The
// runtime's kernels are the ones a compiled CPU program would run, so a folded value is exactly
// what the run would have computed, for every op the CPU runs (1000+ conformance cases) instead
// of the few host_eval implements itself.
#include "graph/kernel_eval.h"

#include <onnx/onnx_pb.h>

#include <set>
#include <string>

#include "exec/exec_graph.h"
#include "kernels/kernel.h"
#include "loader/plain_subgraph.h"
#include "ortc/tensor.h"

namespace ortc::graph {
namespace {

// Ops whose result is not a function of their inputs (random draws), that take or make values
// a HostTensor cannot hold (sequences, optionals, strings), that run subgraphs, or whose
// inputs backends read in their own form (quantized weights).
const std::set<std::string_view, std::less<>>& Excluded() {
  static const std::set<std::string_view, std::less<>> ops = {
      "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Bernoulli",
      "Multinomial", "Dropout", "If", "Loop", "Scan", "SequenceMap", "SequenceAt",
      "SequenceConstruct", "SequenceEmpty", "SequenceErase", "SequenceInsert", "SequenceLength",
      "SplitToSequence", "ConcatFromSequence", "Optional", "OptionalHasElement",
      "OptionalGetElement", "StringNormalizer", "TfIdfVectorizer", "RegexFullMatch", "StringConcat",
      "StringSplit", "Constant",
      // Quantized weights stay quantized: backends match QDQ pairs (int8 convolutions), and a
      // dequantized copy would be four times the bytes.
      "DequantizeLinear", "QuantizeLinear", "DynamicQuantizeLinear"};
  return ops;
}

bool HostType(int32_t dtype) {
  const auto t = static_cast<DataType>(dtype);
  return t != DataType::kString && t != DataType::kUndefined && ElementSize(t) > 0;
}

}  // namespace

bool KernelFoldable(std::string_view op_type) {
  if (Excluded().count(op_type)) return false;
  return exec::FindKernel("", std::string(op_type)) != nullptr;
}

std::optional<std::vector<HostTensor>> EvaluateWithCpuKernel(
    const HostOp& op, const std::vector<const HostTensor*>& inputs) {
  if (!op.domain.empty() || !KernelFoldable(op.op_type) || op.num_outputs == 0) return std::nullopt;
  try {
    exec::ExecGraph g;
    exec::ExecOp x;
    x.name = "fold";
    x.op_type = std::string(op.op_type);
    x.version = op.since_version;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i]) {
        x.inputs.push_back(-1);
        continue;
      }
      const HostTensor& h = *inputs[i];
      if (!HostType(h.dtype)) return std::nullopt;
      const auto dtype = static_cast<DataType>(h.dtype);
      if (static_cast<int64_t>(h.bytes.size()) !=
          h.elements() * static_cast<int64_t>(ElementSize(dtype)))
        return std::nullopt;
      const int v = g.AddValue("in" + std::to_string(i));
      g.constants[v] = Tensor::FromBytes(dtype, h.dims, h.bytes.data(), h.bytes.size());
      x.inputs.push_back(v);
    }
    for (size_t i = 0; i < op.num_outputs; ++i) {
      const int v = g.AddValue("out" + std::to_string(i));
      x.outputs.push_back(v);
      g.outputs.push_back(v);
    }
    onnx::NodeProto node;
    for (const auto* a : op.attributes) {
      if (a->type() == onnx::AttributeProto::GRAPH || a->type() == onnx::AttributeProto::GRAPHS)
        return std::nullopt;
      *node.add_attribute() = *a;
    }
    const std::map<std::string, int64_t> opsets = {{"", op.since_version}};
    auto no_outer = [](const std::string& name) -> Result<int> {
      return InvalidGraph("no outer scope for '" + name + "'");
    };
    if (!loader::AddNodeAttributes(node, nullptr, opsets, no_outer, &x).ok()) return std::nullopt;
    g.ops.push_back(std::move(x));
    g.max_tensor_bytes = static_cast<uint64_t>(op.max_output_bytes);
    if (!exec::BindKernels(&g).ok()) return std::nullopt;
    auto run = exec::Execute(g, {});
    if (!run.ok() || run->size() != op.num_outputs) return std::nullopt;
    std::vector<HostTensor> out;
    for (const Tensor& t : *run) {
      if (!t.is_tensor() || !HostType(static_cast<int32_t>(t.dtype()))) return std::nullopt;
      if (static_cast<int64_t>(t.byte_size()) > op.max_output_bytes) return std::nullopt;
      HostTensor h{static_cast<int32_t>(t.dtype()), t.shape(), ""};
      h.bytes.assign(static_cast<const char*>(t.raw()), t.byte_size());
      out.push_back(std::move(h));
    }
    return out;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace ortc::graph
