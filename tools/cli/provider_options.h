// The `--provider-option backend:key=value` syntax shared by compile (compile-time options) and
// run / verify (the runtime's backend options).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ortc/status.h"

namespace ortc::cli {

using BackendOptions = std::map<std::string, std::map<std::string, std::string>>;

// Fails naming the first item not of the form backend:key=value.
Status ParseProviderOptions(const std::vector<std::string>& items, BackendOptions* out);

}  // namespace ortc::cli
