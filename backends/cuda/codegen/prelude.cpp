// Scaffold: the prelude comes with the elementwise kernels.
#include "cuda/codegen/emitters.h"

namespace ortc::backends::cuda::codegen {
std::string Prelude() {
  return "";
}
}  // namespace ortc::backends::cuda::codegen
