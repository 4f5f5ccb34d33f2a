// The records every --json report shares (schemas/cli_reports.md), compiler's and runtime's
// commands alike: a file on disk as given and resolved, and durations in milliseconds for JSON
// and for text.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

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

}  // namespace ortc::tools
