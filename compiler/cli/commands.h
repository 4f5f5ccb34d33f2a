// Registration of each `ortc` subcommand on the CLI11 app. Each command lives in its own file.
#pragma once

#include <CLI/CLI.hpp>

namespace ortc::cli {

// Adds the subcommand; `exit_code` receives the command's result when it runs.
void AddPartitionCommand(CLI::App& app, int* exit_code);
void AddCompileCommand(CLI::App& app, int* exit_code);
void AddInspectCommand(CLI::App& app, int* exit_code);
void AddRunCommand(CLI::App& app, int* exit_code);
void AddCheckCommand(CLI::App& app, int* exit_code);
void AddVerifyCommand(CLI::App& app, int* exit_code);

}  // namespace ortc::cli
