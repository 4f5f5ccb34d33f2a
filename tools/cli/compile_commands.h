// Registration of the subcommands only `ortc` has (compile, partition, verify, tune) on the CLI11
// app. Each command lives in its own file.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/runtime_commands.h"  // run, check, inspect: shared with ortc-run

namespace ortc::cli {

// Adds the subcommand; `exit_code` receives the command's result when it runs.
void AddPartitionCommand(CLI::App& app, int* exit_code);
void AddCompileCommand(CLI::App& app, int* exit_code);
void AddVerifyCommand(CLI::App& app, int* exit_code);
void AddTuneCommand(CLI::App& app, int* exit_code);

}  // namespace ortc::cli
