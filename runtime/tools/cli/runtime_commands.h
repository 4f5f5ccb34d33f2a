// The subcommands that need only the runtime: `ortc` and the runtime-only `ortc-run` both have
// them (run, check, inspect). Each lives in its own file.
#pragma once

#include <CLI/CLI.hpp>

namespace ortc::cli {

// Adds the subcommand; `exit_code` receives the command's result when it runs.
void AddInspectCommand(CLI::App& app, int* exit_code);
void AddRunCommand(CLI::App& app, int* exit_code);
void AddCheckCommand(CLI::App& app, int* exit_code);

}  // namespace ortc::cli
