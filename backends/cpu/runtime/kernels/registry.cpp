// The table of CPU kernels, built once.
#include "cpu/runtime/kernels/registry.h"

#include <set>
#include <string>
#include <vector>

#include "cpu/runtime/kernels/float_gemm.h"
#include "cpu/runtime/kernels/onednn_conv.h"

namespace ortc::exec {
namespace {

const KernelTable& Table() {
  static const KernelTable table = [] {
    KernelTable t;
    RegisterElementwiseKernels(t);
    RegisterTensorKernels(t);
    RegisterPaddingKernels(t);
    RegisterReductionKernels(t);
    RegisterMatMulKernels(t);
    RegisterInt4MatMulKernels(t);
    RegisterConvKernels(t);
    RegisterPoolKernels(t);
    RegisterNormalizationKernels(t);
    RegisterSoftmaxKernels(t);
    RegisterResizeKernels(t);
    RegisterLossKernels(t);
    RegisterIndexingKernels(t);
    RegisterQuantizationKernels(t);
    RegisterMiscKernels(t);
    RegisterDetectionKernels(t);
    RegisterEinsumKernels(t);
    RegisterSequenceKernels(t);
    RegisterControlFlowKernels(t);
    RegisterRecurrentKernels(t);
    RegisterSamplingKernels(t);
    RegisterSpectralKernels(t);
    RegisterQLinearConvKernels(t);
    RegisterTfIdfKernels(t);
    return t;
  }();
  return table;
}

}  // namespace

KernelFn FindKernel(const std::string& domain, const std::string& op_type) {
  if (!domain.empty() && domain != "ai.onnx") return nullptr;
  auto it = Table().find(op_type);
  return it == Table().end() ? nullptr : it->second;
}

Result<std::shared_ptr<KernelCache>> MakeKernelCache(const ExecOp& op, const ExecGraph& graph) {
  if (!op.domain.empty() && op.domain != "ai.onnx") return std::shared_ptr<KernelCache>();
  static const std::set<std::string, std::less<>> gemm_ops = {
      "MatMul", "MatMulTransposed", "MatMulInt4", "Gemm", "Conv", "FusedConv"};
  if (gemm_ops.count(op.op_type)) PrepareSgemm();  // at load, not in the first run
  if (op.op_type == "Conv" || op.op_type == "FusedConv") {
    const std::string packed = op.String("packed_weights_desc", "");
    if (!packed.empty()) {
      // The layout description is oneDNN's own struct: only the version that wrote it reads it.
      const std::string by = op.String("packed_by", "");
      if (by != "oneDNN " + OneDnnVersion())
        return InvalidGraph("node '" + op.name + "' has weights packed by " +
                            (by.empty() ? std::string("an unknown library") : by) +
                            "; this runtime has oneDNN " + OneDnnVersion() +
                            ": recompile the model with this ortc (or --target-isa portable)");
      if (!op.Has("weight_shape"))
        return InvalidGraph("node '" + op.name + "' has packed weights but no weight_shape");
    }
    const bool constant_weights = op.inputs.size() > 1 && op.inputs[1] >= 0 &&
                                  static_cast<size_t>(op.inputs[1]) < graph.constants.size() &&
                                  !graph.constants[op.inputs[1]].empty();
    if (!packed.empty() && !constant_weights)
      return InvalidGraph("node '" + op.name + "' has packed weights that are not a constant");
    if (!packed.empty()) {
      const size_t want = PackedWeightsBytes(packed);
      const size_t have = graph.constants[op.inputs[1]].byte_size();
      if (want == 0 || have != want)
        return InvalidGraph("node '" + op.name + "': its packed weights hold " +
                            std::to_string(have) + " bytes, their layout needs " +
                            std::to_string(want) + "; the binary is damaged: recompile");
    }
    return std::shared_ptr<KernelCache>(
        std::make_shared<OneDnnConvCache>(constant_weights, packed));
  }
  if ((op.op_type == "MaxPool" || op.op_type == "AveragePool") && op.Int("channels_last", 0))
    return std::shared_ptr<KernelCache>(std::make_shared<OneDnnPlanCache>());
  if (op.op_type == "QLinearConv") {
    const bool constant_weights = op.inputs.size() > 3 && op.inputs[3] >= 0 &&
                                  static_cast<size_t>(op.inputs[3]) < graph.constants.size() &&
                                  !graph.constants[op.inputs[3]].empty();
    return std::shared_ptr<KernelCache>(std::make_shared<OneDnnConvCache>(constant_weights, ""));
  }
  return std::shared_ptr<KernelCache>();
}

std::vector<std::string> KernelOps() {
  std::vector<std::string> ops;
  for (const auto& [name, fn] : Table()) ops.push_back(name);
  return ops;
}

}  // namespace ortc::exec
