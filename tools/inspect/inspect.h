// `ortc inspect`: describes a context binary or an EPContext model, and says precisely what is
// wrong with a corrupt one (which section, which check). Results are JSON; the CLI renders text.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>

#include "ortc/status.h"

namespace ortc::inspect {

// Always returns a report; `ok` is false, with `error` {"code", "message"} as every ortc JSON
// report gives errors, when the file cannot be read or fails verification.
nlohmann::json InspectBinaryFile(const std::filesystem::path& path);
nlohmann::json InspectCtxModel(const std::filesystem::path& path);
// Picks by content: ortc binaries start with their magic, anything else is read as ONNX.
nlohmann::json InspectPath(const std::filesystem::path& path);
// The error a report carries, as a Status (ok when it has none).
Status ReportedError(const nlohmann::json& report);
// `error` for a report: {"code": "INVALID_GRAPH", "message": ...}.
nlohmann::json ErrorJson(const Status& s);

}  // namespace ortc::inspect
