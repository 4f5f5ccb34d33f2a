// The explicit list of backends known to this build, in a fixed order.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "backend.h"

namespace ortc::backends {

const std::vector<const Backend*>& AllBackends();
const Backend* FindBackend(std::string_view name);  // nullptr when unknown
// "cpu, cuda": the names to list when a user names an unknown one.
std::string KnownBackendNames();

}  // namespace ortc::backends
