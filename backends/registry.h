// The explicit list of backends known to this build, in a fixed order.
#pragma once

#include <string_view>
#include <vector>

#include "backend.h"

namespace ortc::backends {

const std::vector<const Backend*>& AllBackends();
const Backend* FindBackend(std::string_view name);  // nullptr when unknown

}  // namespace ortc::backends
