#include "cli/version.h"

#include "context_binary_format.h"
#include "cuda/toolchain/nvrtc.h"
#include "graph/opset_support.h"
#include "kernels/onednn_conv.h"
#include "ortc/runtime.h"
#include "ortc_git_commit.h"
#include "plugin_abi/ortc_backend_plugin.h"

namespace ortc::cli {

std::string VersionText() {
  std::string t = "ortc " ORTC_VERSION_STRING " (commit " ORTC_GIT_COMMIT ")\n";
  t += "context binary format " + std::to_string(format::kFormatMajor) + "." +
       std::to_string(format::kFormatMinor) + ", backend plugin ABI " +
       std::to_string(ORTC_BACKEND_ABI_VERSION) + "\n";
  t += "ONNX models: IR up to " + std::to_string(graph::kMaxIrVersion) + ", ai.onnx opsets 1-" +
       std::to_string(graph::kMaxDefaultOpset) + ", ai.onnx.ml 1-" +
       std::to_string(graph::kMaxMlOpset) + "\n";
  const std::string isa = exec::OneDnnEffectiveIsa();
  t += "cpu: oneDNN " + exec::OneDnnVersion() + ", code for " +
       (isa.empty() ? std::string("an ISA older than avx2") : isa) + " on this machine\n";
  auto nvrtc = backends::cuda::toolchain::LoadNvrtc();
  t += "cuda compile: " +
       (nvrtc.ok() ? "NVRTC " + std::to_string(nvrtc->major) + "." + std::to_string(nvrtc->minor) +
                         " (" + nvrtc->library + ")"
                   : "unavailable: " + nvrtc.status().message()) +
       "\n";
  const DeviceDescription d = DeviceDescription::Detect();
  const auto driver = d.cuda_driver_version;
  t += "cuda run on this machine: ";
  t += driver > 0 ? "driver " + std::to_string(driver / 1000) + "." +
                        std::to_string((driver % 1000) / 10) +
                        (d.cuda_archs.empty() ? ", no device" : ", device " + d.cuda_archs[0])
                  : "no driver (" + d.cuda_unavailable_reason + ")";
  t += "; cuDNN " + (d.cudnn_version.empty() ? "not found" : d.cudnn_version);
  t += "; cuBLAS " + (d.cublas_version.empty() ? "not found" : d.cublas_version);
  return t;
}

}  // namespace ortc::cli
