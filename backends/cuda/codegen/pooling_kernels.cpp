// Scaffold: no generator yet.
#include "cuda/codegen/emitters.h"

namespace ortc::backends::cuda::codegen {
bool IsPoolingOp(const std::string&) {
  return false;
}
std::string PoolingUnsupported(const OpDesc& op) {
  return "no CUDA kernel generator for " + op.op_type;
}
Result<KernelSource> EmitPooling(const std::string&, const OpDesc& op) {
  return NotImplemented(op.op_type);
}
}  // namespace ortc::backends::cuda::codegen
