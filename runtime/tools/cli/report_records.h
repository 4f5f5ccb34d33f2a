// The records every --json report shares (schemas/cli_reports.md): a file on disk as given and
// resolved, the inputs a run was fed, and durations in milliseconds for JSON and for text.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "ortc/runtime.h"

namespace ortc::tools {

// The absolute path with symbolic links and dot segments resolved as far as the path exists.
std::string AbsolutePath(const std::filesystem::path& path);

// {path, absolute_path}: `path` exactly as the user typed it or as the compiler wrote it.
nlohmann::json FileJson(const std::filesystem::path& as_given);

// A context binary inside its ctx model: no file of its own, so both paths are null.
nlohmann::json EmbeddedFileJson();

// A duration in ms rounded to the microsecond: reports carry what a clock can tell apart.
double RoundMs(double ms);
// The same for text: "390.849", "0.535".
std::string FormatMs(double ms);

// What each input was fed: {name, dtype, shape, source} with source "file" (named in `files` as
// name=path) or "random", and dynamic_dims_set_to: 1 for a random input whose dynamic dims no
// `shapes` entry fixed.
nlohmann::json InputsJson(const std::vector<TensorInfo>& declared,
                          const std::vector<std::pair<std::string, Tensor>>& feeds,
                          const std::vector<std::string>& files,
                          const std::vector<std::string>& shapes);

}  // namespace ortc::tools
