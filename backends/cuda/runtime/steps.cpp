// Issuing prepared steps on a stream (used by warm-up, graph capture and stream execution).
#include "steps.h"

namespace ortc::cuda_rt {

const char* StepKindName(StepKind k) {
  switch (k) {
    case StepKind::kKernel:
      return "kernel";
    case StepKind::kCudnn:
      return "cudnn";
    case StepKind::kCublasLt:
      return "cublaslt";
    case StepKind::kCopy:
      return "copy";
  }
  return "?";
}

void BindKernelParams(std::vector<Step>* steps) {
  for (auto& s : *steps) {
    if (auto* k = std::get_if<KernelStep>(&s.what)) {
      k->params.clear();
      for (auto& a : k->args) k->params.push_back(&a);
    }
  }
}

OrtcPluginStatus IssueStep(const Step& step, const LibraryContext& lib) {
  if (const auto* k = std::get_if<KernelStep>(&step.what)) {
    ORTC_CU(Driver().cuLaunchKernel(k->fn, k->grid[0], k->grid[1], k->grid[2], k->block[0],
                                    k->block[1], k->block[2], k->shared, lib.stream,
                                    const_cast<void**>(k->params.data()), nullptr));
  } else if (const auto* c = std::get_if<ConvPlanPtr>(&step.what)) {
    return RunConv(**c, lib);
  } else if (const auto* g = std::get_if<GemmPlanPtr>(&step.what)) {
    return RunGemm(**g, lib);
  } else if (const auto* cp = std::get_if<CopyStep>(&step.what)) {
    if (cp->bytes) ORTC_CU(Driver().cuMemcpyDtoDAsync(cp->dst, cp->src, cp->bytes, lib.stream));
  }
  return ORTC_PLUGIN_OK;
}

OrtcPluginStatus IssueSteps(const std::vector<Step>& steps, const LibraryContext& lib,
                            const std::string& graph) {
  for (const auto& step : steps) {
    const OrtcPluginStatus st = IssueStep(step, lib);
    if (st != ORTC_PLUGIN_OK)
      return Fail(st, "graph '" + graph + "' step '" + step.name + "': " + LastError());
  }
  return ORTC_PLUGIN_OK;
}

}  // namespace ortc::cuda_rt
