// The backends known to this build, in a fixed order, and the plugins loaded on request. Every
// one is reached through the plugin ABI's compile-side table (abi/abi_backend.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "backend.h"
#include "ortc/status.h"

namespace ortc::backends {

// The in-tree backends, then the plugins loaded so far, in load order.
std::vector<const Backend*> AllBackends();
// An in-tree backend, or a plugin loaded now or before (abi/plugin_compilers.h says where it is
// searched); the error says where it was looked for and why each attempt failed.
Result<const Backend*> ResolveBackend(std::string_view name);
const Backend* FindBackend(std::string_view name);  // nullptr when unknown or not loadable
// "cpu, cuda": the names to list when a user names an unknown one.
std::string KnownBackendNames();

}  // namespace ortc::backends
