// Parsing and validation of the CUDA backend's options.
#include "cuda/compile/options.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <charconv>
#include <sstream>

#include "cuda/compile/toolchain/nvrtc.h"
#include "cuda/compile/tuning_choices.h"

namespace ortc::backends::cuda {
namespace {

// "sm_80" -> 80; 0 when not of that form.
int ArchNumber(const std::string& arch) {
  if (arch.size() < 5 || arch.rfind("sm_", 0) != 0) return 0;
  int n = 0;
  auto [ptr, ec] = std::from_chars(arch.data() + 3, arch.data() + arch.size(), n);
  if (ec != std::errc() || ptr != arch.data() + arch.size() || n < 50 || n > 999) return 0;
  return n;
}

}  // namespace

Result<CudaOptions> ParseCudaOptions(const ProviderOptions& options) {
  CudaOptions o;
  std::vector<std::string> archs = toolchain::DefaultTargetArchs();
  for (const auto& [key, value] : options) {
    if (key == "precision") {
      if (value == "fp32") {
        o.precision = Precision::kFp32;
      } else if (value == "fp16") {
        o.precision = Precision::kFp16;
      } else if (value == "bf16") {
        o.precision = Precision::kBf16;
      } else if (value == "tf32") {
        o.precision = Precision::kTf32;
      } else {
        return InvalidArgument("cuda precision '" + value +
                               "' is not one of fp32, tf32, fp16, bf16");
      }
    } else if (key == "target_arch") {
      archs.clear();
      std::stringstream ss(value);
      std::string arch;
      while (std::getline(ss, arch, ',')) {
        if (arch.empty()) continue;
        if (ArchNumber(arch) == 0) {
          return InvalidArgument("--target-arch '" + arch +
                                 "' is not a CUDA architecture of the form sm_80");
        }
        if (std::find(archs.begin(), archs.end(), arch) == archs.end()) archs.push_back(arch);
      }
      if (archs.empty()) return InvalidArgument("--target-arch names no architecture");
    } else if (key == "workspace_mb") {
      int64_t mb = 0;
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), mb);
      if (ec != std::errc() || ptr != value.data() + value.size() || mb < 0 || mb > (1 << 20))
        return InvalidArgument("cuda workspace_mb '" + value + "' is not a size in MiB");
      o.workspace_bytes = mb << 20;
    } else if (key == "attention") {
      if (value == "gemm") {
        o.attention = CudaOptions::Attention::kGemm;
      } else if (value == "fused") {
        o.attention = CudaOptions::Attention::kFused;
      } else {
        return InvalidArgument("cuda attention '" + value + "' is not one of gemm, fused");
      }
    } else if (key == "grouped_conv") {
      if (value == "auto") {
        o.grouped_conv = CudaOptions::GroupedConv::kAuto;
      } else if (value == "library") {
        o.grouped_conv = CudaOptions::GroupedConv::kLibrary;
      } else if (value == "generated") {
        o.grouped_conv = CudaOptions::GroupedConv::kGenerated;
      } else {
        return InvalidArgument("cuda grouped_conv '" + value +
                               "' is not one of auto, library, generated");
      }
    } else if (key == "merge_launches") {
      if (value != "on" && value != "off")
        return InvalidArgument("cuda merge_launches '" + value + "' is not one of on, off");
      o.merge_launches = value == "on";
    } else if (key == "tuning_cache") {
      if (value.empty()) return InvalidArgument("cuda tuning_cache names no file");
      o.tuning_cache = value;
    } else {
      return InvalidArgument(
          "unknown cuda option '" + key +
          "' (known: precision, target_arch, workspace_mb, attention, grouped_conv, "
          "merge_launches, tuning_cache)");
    }
  }
  std::sort(archs.begin(), archs.end(), [](const std::string& a, const std::string& b) {
    return ArchNumber(a) < ArchNumber(b);
  });
  o.cubin_archs = archs;
  o.ptx_arch = "compute_" + archs.back().substr(3);
  // After the targets: whether the cache fits depends on them.
  ORTC_RETURN_IF_ERROR(ApplyTuningCache(&o));
  return o;
}

int32_t DeviceFloatType(Precision p) {
  switch (p) {
    case Precision::kFp16:
      return onnx::TensorProto::FLOAT16;
    case Precision::kBf16:
      return onnx::TensorProto::BFLOAT16;
    default:
      return onnx::TensorProto::FLOAT;
  }
}

std::string PrecisionName(Precision p) {
  switch (p) {
    case Precision::kFp16:
      return "fp16";
    case Precision::kBf16:
      return "bf16";
    case Precision::kTf32:
      return "tf32";
    default:
      return "fp32";
  }
}

bool UsesTensorCores(Precision p) {
  return p != Precision::kFp32;
}

}  // namespace ortc::backends::cuda
