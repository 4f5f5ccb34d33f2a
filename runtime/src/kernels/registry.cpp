// The table of CPU kernels, built once.
#include "kernels/registry.h"

#include <vector>

#include "kernels/onednn_conv.h"

namespace ortc::exec {
namespace {

const KernelTable& Table() {
  static const KernelTable table = [] {
    KernelTable t;
    RegisterElementwiseKernels(t);
    RegisterTensorKernels(t);
    RegisterReductionKernels(t);
    RegisterNnKernels(t);
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

std::shared_ptr<KernelCache> MakeKernelCache(const ExecOp& op, const ExecGraph& graph) {
  if (!op.domain.empty() && op.domain != "ai.onnx") return nullptr;
  if (op.op_type == "Conv" || op.op_type == "FusedConv") {
    const bool constant_weights = op.inputs.size() > 1 && op.inputs[1] >= 0 &&
                                  static_cast<size_t>(op.inputs[1]) < graph.constants.size() &&
                                  !graph.constants[op.inputs[1]].empty();
    return std::make_shared<OneDnnConvCache>(constant_weights);
  }
  return nullptr;
}

std::vector<std::string> KernelOps() {
  std::vector<std::string> ops;
  for (const auto& [name, fn] : Table()) ops.push_back(name);
  return ops;
}

}  // namespace ortc::exec
