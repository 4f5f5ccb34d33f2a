// The table of CPU kernels, built once.
#include "kernels/registry.h"

#include <vector>

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

std::vector<std::string> KernelOps() {
  std::vector<std::string> ops;
  for (const auto& [name, fn] : Table()) ops.push_back(name);
  return ops;
}

}  // namespace ortc::exec
