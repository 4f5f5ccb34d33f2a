// Static registration: one line per in-tree backend.
#include "registry.h"

#include "cpu/compile/capability.h"
#include "cuda/compile/capability.h"

namespace ortc::backends {

const std::vector<const Backend*>& AllBackends() {
  static const std::vector<const Backend*> all = {&cpu::CpuBackend(), &cuda::CudaBackend()};
  return all;
}

std::string KnownBackendNames() {
  std::string known;
  for (const Backend* b : AllBackends())
    known += (known.empty() ? "" : ", ") + std::string(b->name());
  return known;
}

const Backend* FindBackend(std::string_view name) {
  for (const Backend* b : AllBackends()) {
    if (b->name() == name) return b;
  }
  return nullptr;
}

}  // namespace ortc::backends
