// How every `ortc` command reports a failure: a JSON object on stdout with --json (so CI can
// parse it; `report` may carry what was computed before the failure), else a line on stderr.
#pragma once

#include <nlohmann/json.hpp>

#include "ortc/status.h"

namespace ortc::cli {

// Every --json report carries this as "schema_version" (schemas/cli_reports.md); it rises when
// a field changes meaning or disappears, not when one is added.
// 2: declared shapes are arrays; 3: one vocabulary across commands (the list is in the schema).
inline constexpr int kReportSchemaVersion = 3;

// The report as printed: with schema_version set, indented.
std::string ReportText(nlohmann::json report);

// Returns the exit code: `exit_code` when given, else the one the status maps to.
int ReportError(bool json, const Status& s, nlohmann::json report = nlohmann::json::object(),
                int exit_code = -1);

}  // namespace ortc::cli
