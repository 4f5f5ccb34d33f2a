// `ortc inspect`: describes a context binary or an EPContext model, and says precisely what is
// wrong with a corrupt one (which section, which check). Results are JSON; the CLI renders text.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>

namespace ortc::inspect {

// Always returns a report; `ok` is false (with `error`) when the file fails verification.
nlohmann::json InspectBinaryFile(const std::filesystem::path& path);
nlohmann::json InspectCtxModel(const std::filesystem::path& path);
// Picks by content: ortc binaries start with their magic, anything else is read as ONNX.
nlohmann::json InspectPath(const std::filesystem::path& path);

}  // namespace ortc::inspect
