// CUDA compile options (from --precision, --target-arch and --provider-option cuda:key=value):
// precision, target architectures and the library workspace cap.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "backend.h"

namespace ortc::backends::cuda {

// fp32: IEEE fp32 math everywhere (cuDNN FMA math, cuBLASLt COMPUTE_32F, no TF32). tf32: fp32
// storage, convolutions and GEMMs may round their inputs to TF32 on tensor cores. fp16/bf16:
// reduced-precision storage, fp32 accumulation.
enum class Precision { kFp32, kFp16, kBf16, kTf32 };

struct CudaOptions {
  Precision precision = Precision::kFp32;
  std::vector<std::string> cubin_archs;  // "sm_80"..., ascending
  std::string ptx_arch;                  // "compute_90": PTX of the newest arch
  // The most device memory one cuDNN / cuBLASLt call may use as workspace.
  int64_t workspace_bytes = 64ll << 20;
  // How recognised attention runs: on cuBLASLt GEMMs with one softmax kernel (the default), or
  // as the one-kernel FusedAttention (SIMT; measured slower on an H200, see
  // lowering_attention_gemm.cpp).
  enum class Attention { kGemm, kFused } attention = Attention::kGemm;
  // Depthwise and narrow grouped convolutions: generated kernels or cuDNN. kAuto applies the
  // static rule (lowering_grouped_conv.h) unless a tuning cache measured the step.
  enum class GroupedConv { kAuto, kLibrary, kGenerated } grouped_conv = GroupedConv::kAuto;
  // Consecutive independent kernels share one launch (launch_merging.h); off keeps one launch
  // per kernel, so a per-step profile times each kernel on its own.
  bool merge_launches = true;
  // tuning_cache=FILE (`ortc compile --tuning-cache`): choices measured by `ortc tune`, keyed by
  // what a step computes (tuning_choices.h). Used by kAuto steps when the cache fits this
  // compile; otherwise tuning_cache_ignored says why and the static rules apply.
  std::string tuning_cache;
  std::map<std::string, std::string> tuned_choices;
  std::string tuning_cache_ignored;
};

// Keys: precision (fp32|tf32|fp16|bf16), target_arch (comma-separated sm_XY), workspace_mb,
// attention (gemm|fused), grouped_conv (auto|library|generated), merge_launches (on|off),
// tuning_cache (a file).
Result<CudaOptions> ParseCudaOptions(const ProviderOptions& options);

// ONNX element type activations and float weights are stored in on the device.
int32_t DeviceFloatType(Precision p);
std::string PrecisionName(Precision p);  // "fp32", "tf32", "fp16", "bf16"
// Whether library calls run on tensor cores, which read NHWC: the layout convolutions get.
bool UsesTensorCores(Precision p);

}  // namespace ortc::backends::cuda
