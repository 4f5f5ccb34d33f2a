// Entry point of the `ortc` command line.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include "abi/plugin_compilers.h"
#include "cli/compile_commands.h"
#include "cli/exit_codes.h"
#include "cli/model_opener.h"
#include "cli/source_models.h"
#include "cli/version.h"

int main(int argc, char** argv) {
  CLI::App app{
      "ortc: ahead-of-time compiler for ONNX models.\n"
      "Partitions a model across backends (CUDA, CPU) and compiles each part.",
      "ortc"};
  app.footer(std::string("\n") + ortc::cli::kExitCodeHelp +
             "\nRun 'ortc <command> --help' for a command's options and examples.");
  app.set_version_flag("--version", ortc::cli::VersionText,
                       "Print the version, commit, formats and the libraries found, and exit");
  app.require_subcommand(1);
  app.fallthrough();  // subcommands inherit it: -v may come after the command too
  // Diagnostics go to stderr, so --json output on stdout stays one JSON object.
  spdlog::set_default_logger(spdlog::stderr_color_st("ortc"));
  spdlog::set_pattern("[%l] %v");
  spdlog::set_level(spdlog::level::warn);
  app.add_flag_function(
         "-v,--verbose",
         [](int64_t count) {
           spdlog::set_level(count >= 2 ? spdlog::level::debug : spdlog::level::info);
         },
         "Log to stderr what loading and partitioning decided: -v shape inference and groups, "
         "-vv every refusal of every node")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option_function<std::vector<std::string>>(
      "--backend-path",
      [](const std::vector<std::string>& folders) {
        // The compiler searches these first; the runtime (run, verify, generate) too, through
        // the variable it reads, so one flag serves a compile and the run after it.
        std::string path;
        for (const auto& f : folders) {
          std::error_code ec;
          const std::string dir = std::filesystem::absolute(f, ec).string();
          ortc::backends::abi::AddBackendSearchFolder(dir);
          path += (path.empty() ? "" : ":") + dir;
        }
        if (const char* old = std::getenv("ORTC_BACKEND_PATH"); old && *old)
          path += ":" + std::string(old);
        ::setenv("ORTC_BACKEND_PATH", path.c_str(), 1);
      },
      "Folder of out-of-tree backend libraries (libortc_backend_<name>.so, e.g. "
      "examples/backend_skeleton's npu), searched before ORTC_BACKEND_PATH (repeatable): "
      "ortc compile m.onnx --ep npu,cuda,cpu --backend-path DIR");
  // run and generate open plain models as the compiler reads them (the ops it rewrites at load).
  ortc::cli::SetModelOpener([](const std::filesystem::path& model, const ortc::SessionOptions& o) {
    return ortc::cli::OpenSourceModel(model, o);
  });
  int exit_code = ortc::cli::kExitOk;
  ortc::cli::AddCompileCommand(app, &exit_code);
  ortc::cli::AddInspectCommand(app, &exit_code);
  ortc::cli::AddPartitionCommand(app, &exit_code);
  ortc::cli::AddRunCommand(app, &exit_code);
  ortc::cli::AddGenerateCommand(app, &exit_code);
  ortc::cli::AddCheckCommand(app, &exit_code);
  ortc::cli::AddVerifyCommand(app, &exit_code);
  ortc::cli::AddTuneCommand(app, &exit_code);
  return ortc::cli::ParseAndRun(app, argc, argv, &exit_code);
}
