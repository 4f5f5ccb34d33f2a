// Entry point of `ortc-run`: the runtime-only tool a device gets (run, check, inspect of
// compiled bundles). It links the runtime and nothing of the compiler: no ONNX checker or shape
// inference, no NVRTC, no logging library.
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/exit_codes.h"
#include "cli/runtime_commands.h"
#include "cli/runtime_version.h"
#include "ortc_git_commit.h"

int main(int argc, char** argv) {
  CLI::App app{
      "ortc-run: runs and checks models compiled by ortc (model_ctx.onnx + binaries), without "
      "the compiler.",
      "ortc-run"};
  app.footer(std::string("\n") + ortc::cli::kExitCodeHelp +
             "\nRun 'ortc-run <command> --help' for a command's options and examples.");
  app.set_version_flag(
      "--version",
      [] {
        return "ortc-run " ORTC_VERSION_STRING " (commit " ORTC_GIT_COMMIT ")\n" +
               ortc::cli::RuntimeVersionLines();
      },
      "Print the version, commit, formats and the libraries found, and exit");
  app.require_subcommand(1);
  int exit_code = ortc::cli::kExitOk;
  ortc::cli::AddRunCommand(app, &exit_code);
  ortc::cli::AddGenerateCommand(app, &exit_code);
  ortc::cli::AddCheckCommand(app, &exit_code);
  ortc::cli::AddInspectCommand(app, &exit_code);
  return ortc::cli::ParseAndRun(app, argc, argv, &exit_code);
}
