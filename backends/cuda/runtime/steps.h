// The prepared steps of one graph instance: everything a step needs is resolved at load (kernel
// function and its parameter array, library plans, copy addresses), so issuing a step on the
// stream is one driver or library call with no lookup and no allocation.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "library_calls.h"

namespace ortc::cuda_rt {

struct KernelStep {
  CUfunction fn = nullptr;
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  unsigned shared = 0;
  std::vector<CUdeviceptr> args;  // fixed at load: every buffer has a fixed address
  std::vector<void*> params;      // &args[i], as cuLaunchKernel wants them
};

struct CopyStep {
  CUdeviceptr src = 0, dst = 0;
  uint64_t bytes = 0;
};

enum class StepKind { kKernel, kCudnn, kCublasLt, kCopy };
const char* StepKindName(StepKind k);  // "kernel", "cudnn", "cublaslt", "copy"

struct Step {
  std::string name;
  StepKind kind = StepKind::kKernel;
  std::variant<KernelStep, ConvPlanPtr, GemmPlanPtr, CopyStep> what;
};

// Points each kernel step's parameter array at its arguments (after the steps stopped moving).
void BindKernelParams(std::vector<Step>* steps);

// Issues one step on lib.stream; on failure the plugin's last error names the call.
OrtcPluginStatus IssueStep(const Step& step, const LibraryContext& lib);

// Issues every step in order; on failure the error names the step.
OrtcPluginStatus IssueSteps(const std::vector<Step>& steps, const LibraryContext& lib,
                            const std::string& graph);

}  // namespace ortc::cuda_rt
