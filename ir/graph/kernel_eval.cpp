// Folding through the CPU runtime's kernels (ortc::RunCpuOp, one op whose inputs are constants).
// The runtime's kernels are the ones a compiled CPU program would run, so a folded value is exactly
// what the run would have computed, for every op the CPU runs (1000+ conformance cases) instead
// of the few host_eval implements itself.
#include "graph/kernel_eval.h"

#include <onnx/onnx_pb.h>

#include <set>
#include <string>

#include "ortc/runtime.h"
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
  return HasCpuKernel(std::string(op_type));
}

std::optional<std::vector<HostTensor>> EvaluateWithCpuKernel(
    const HostOp& op, const std::vector<const HostTensor*>& inputs) {
  if (!op.domain.empty() || !KernelFoldable(op.op_type) || op.num_outputs == 0) return std::nullopt;
  try {
    CpuOpCall call;
    call.op_type = std::string(op.op_type);
    call.opset = op.since_version;
    std::vector<Tensor> held;  // the inputs as tensors, alive for the call
    held.reserve(inputs.size());
    for (const HostTensor* h : inputs) {
      if (!h) continue;
      if (!HostType(h->dtype)) return std::nullopt;
      const auto dtype = static_cast<DataType>(h->dtype);
      if (static_cast<int64_t>(h->bytes.size()) !=
          h->elements() * static_cast<int64_t>(ElementSize(dtype)))
        return std::nullopt;
      held.push_back(Tensor::FromBytes(dtype, h->dims, h->bytes.data(), h->bytes.size()));
    }
    size_t next = 0;
    for (const HostTensor* h : inputs) call.inputs.push_back(h ? &held[next++] : nullptr);
    call.num_outputs = op.num_outputs;
    onnx::NodeProto node;
    for (const auto* a : op.attributes) {
      if (a->type() == onnx::AttributeProto::GRAPH || a->type() == onnx::AttributeProto::GRAPHS)
        return std::nullopt;
      *node.add_attribute() = *a;
    }
    call.attributes = node.SerializeAsString();
    call.max_output_bytes = static_cast<uint64_t>(op.max_output_bytes);
    auto run = RunCpuOp(call);
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
