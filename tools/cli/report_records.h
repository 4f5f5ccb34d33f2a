// The records of the --json reports (schemas/cli_reports.md) that need the runtime: the inputs
// a run was fed. Files and durations, which the compiler's reports use too, are base/'s
// (report_json.h).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "base/report_json.h"
#include "ortc/runtime.h"

namespace ortc::tools {

// What each input was fed: {name, dtype, shape, source} with source "file" (named in `files` as
// name=path) or "random", and dynamic_dims_set_to: 1 for a random input whose dynamic dims no
// `shapes` entry fixed.
nlohmann::json InputsJson(const std::vector<TensorInfo>& declared,
                          const std::vector<std::pair<std::string, Tensor>>& feeds,
                          const std::vector<std::string>& files,
                          const std::vector<std::string>& shapes);

}  // namespace ortc::tools
