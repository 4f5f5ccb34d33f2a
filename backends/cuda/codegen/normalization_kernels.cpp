// Scaffold: no generator yet.
#include "cuda/codegen/emitters.h"

namespace ortc::backends::cuda::codegen {
bool IsNormalizationOp(const std::string&) {
  return false;
}
std::string NormalizationUnsupported(const OpDesc& op) {
  return "no CUDA kernel generator for " + op.op_type;
}
Result<KernelSource> EmitNormalization(const std::string&, const OpDesc& op) {
  return NotImplemented(op.op_type);
}
}  // namespace ortc::backends::cuda::codegen
