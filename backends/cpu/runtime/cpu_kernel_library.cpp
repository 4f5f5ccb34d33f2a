// ortc::DescribeCpuKernelLibrary: oneDNN's facts for callers outside the runtime (the commands'
// --version and bundle manifests), which must not reach into the kernels.
#include "cpu/runtime/kernels/onednn_conv.h"
#include "ortc/runtime.h"

namespace ortc {

CpuKernelLibrary DescribeCpuKernelLibrary() {
  return {"oneDNN", exec::OneDnnVersion(), exec::OneDnnEffectiveIsa()};
}

}  // namespace ortc
