#include "cli/version.h"

#include "cli/runtime_version.h"
#include "cuda/compile/toolchain/nvrtc.h"
#include "graph/opset_support.h"
#include "ortc_git_commit.h"

namespace ortc::cli {

std::string VersionText() {
  std::string t = "ortc " ORTC_VERSION_STRING " (commit " ORTC_GIT_COMMIT ")\n";
  t += "ONNX models: IR up to " + std::to_string(graph::kMaxIrVersion) + ", ai.onnx opsets 1-" +
       std::to_string(graph::kMaxDefaultOpset) + ", ai.onnx.ml 1-" +
       std::to_string(graph::kMaxMlOpset) + "\n";
  auto nvrtc = backends::cuda::toolchain::LoadNvrtc();
  t += "cuda compile: " +
       (nvrtc.ok() ? "NVRTC " + std::to_string(nvrtc->major) + "." + std::to_string(nvrtc->minor) +
                         " (" + nvrtc->library + ")"
                   : "unavailable: " + nvrtc.status().message()) +
       "\n";
  return t + RuntimeVersionLines();
}

}  // namespace ortc::cli
