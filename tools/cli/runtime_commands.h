// The subcommands that need only the runtime: `ortc` and the runtime-only `ortc-run` both have
// them (run, check, inspect). Each lives in its own file.
#pragma once

#include <CLI/CLI.hpp>

namespace ortc::cli {

// Parses the command line and runs the command chosen, which stores its result in *exit_code;
// returns the process exit code (CLI11's own answers: 0 for --help, kExitUsage for a bad line).
int ParseAndRun(CLI::App& app, int argc, char** argv, const int* exit_code);

// Adds the subcommand; `exit_code` receives the command's result when it runs.
void AddInspectCommand(CLI::App& app, int* exit_code);
void AddRunCommand(CLI::App& app, int* exit_code);
void AddGenerateCommand(CLI::App& app, int* exit_code);
void AddCheckCommand(CLI::App& app, int* exit_code);

}  // namespace ortc::cli
