// Defaults of the Backend interface for backends without a compile side.
#include "backend.h"

namespace ortc::backends {

Status Backend::ValidateOptions(const ProviderOptions& options) const {
  if (!options.empty()) {
    return InvalidArgument("backend " + std::string(name()) + " takes no provider options (got '" +
                           options.begin()->first + "')");
  }
  return Status::Ok();
}

Result<CompiledGraph> Backend::Compile(const graph::Model&, const Subgraph&, const ProviderOptions&,
                                       const CompileProgress&) const {
  return NotImplemented("backend " + std::string(name()) + " cannot compile yet (" +
                        std::string(status_line()) + ")");
}

}  // namespace ortc::backends
