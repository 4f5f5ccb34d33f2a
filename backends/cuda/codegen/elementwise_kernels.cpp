// Scaffold: no generator yet.
#include "cuda/codegen/emitters.h"

namespace ortc::backends::cuda::codegen {
bool IsElementwiseOp(const std::string&) {
  return false;
}
std::string ElementwiseUnsupported(const OpDesc& op) {
  return "no CUDA kernel generator for " + op.op_type;
}
Result<KernelSource> EmitFusedElementwise(const std::string&, const FusedGroup&) {
  return NotImplemented("elementwise kernels");
}
}  // namespace ortc::backends::cuda::codegen
