// Error reporting shared by the commands.
#include "cli/report_error.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "base/temp_registry.h"
#include "cli/exit_codes.h"
#include "cli/runtime_commands.h"

namespace ortc::cli {

std::string ReportText(nlohmann::json report) {
  report["schema_version"] = kReportSchemaVersion;
  return report.dump(2);
}

int ReportError(bool json, const Status& s, nlohmann::json report, int exit_code) {
  if (json) {
    report["ok"] = false;
    report["error"] = {{"code", StatusCodeName(s.code())}, {"message", s.message()}};
    std::cout << ReportText(report) << "\n";
  } else {
    std::cerr << "error: " << s.ToString() << "\n";
  }
  return exit_code >= 0 ? exit_code : ExitCodeFor(s);
}

namespace {

// Whether everything written to stdout reached it: a report into a full disk or a closed
// file must not exit 0 (a CI job would read a truncated or empty report as success).
bool StdoutWritten() {
  std::cout.flush();
  const bool ok = std::cout.good();
  return std::fflush(stdout) == 0 && !std::ferror(stdout) && ok;
}

int Finish(int code) {
  if (StdoutWritten()) return code;
  std::cerr << "error: IO_ERROR: cannot write to standard output (" << std::strerror(errno)
            << "): the report is incomplete\n";
  return code == kExitOk ? kExitIo : code;
}

// Levenshtein distance, for "did you mean" on a mistyped command.
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// A first argument that is no option and no command: CLI11 would only say "A subcommand is
// required"; name it, the closest command and the list.
std::string UnknownCommand(CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return "";
  const std::string given = argv[1];
  std::string list, closest;
  size_t best = 3;  // suggest within two edits
  for (const auto* sub : app.get_subcommands({})) {
    const std::string& name = sub->get_name();
    if (name == given) return "";
    list += (list.empty() ? "" : ", ") + name;
    if (const size_t d = EditDistance(given, name); d < best) {
      best = d;
      closest = name;
    }
  }
  // ortc-run is the runtime-only tool: compiling is the ortc command's.
  const bool compiler_command =
      given == "compile" || given == "partition" || given == "verify" || given == "tune";
  return "unknown command '" + given + "'" +
         (compiler_command ? "; " + given + " is a command of ortc (" + app.get_name() +
                                 " only runs compiled models)"
          : closest.empty() ? ""
                            : "; did you mean '" + closest + "'?") +
         " (commands: " + list + "; --help lists them)";
}

}  // namespace

// Whether the command line asks for a JSON report: then even a line that does not parse
// answers with one (the promise of schemas/cli_reports.md), besides the text on stderr.
bool WantsJson(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--json") return true;
  return false;
}

int ParseAndRun(CLI::App& app, int argc, char** argv, const int* exit_code) {
  const bool json = WantsJson(argc, argv);
  if (std::string why = UnknownCommand(app, argc, argv); !why.empty()) {
    if (json) return Finish(ReportError(true, InvalidArgument(why)));
    std::cerr << "error: INVALID_ARGUMENT: " << why << "\n";
    return kExitUsage;
  }
  // A file-size limit (ulimit -f) makes the write that crosses it fail with EFBIG, which the
  // writers report and clean up after, instead of SIGXFSZ killing the process mid-write.
  std::signal(SIGXFSZ, SIG_IGN);
  // Ctrl-C, SIGTERM or SIGHUP removes every temporary file a command has in flight (compile's
  // outputs, run's .npy files, profiles, reports) before the process dies of the signal.
  format::InstallTempFileCleanup();
  // The commands run inside parse(); whatever they fail to turn into a Status ends here, as an
  // error and an exit code instead of std::terminate.
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // the message (or the help) as CLI11 prints it
    if (code != 0 && json) ReportError(true, InvalidArgument(e.what()));
    return Finish(code == 0 ? kExitOk : kExitUsage);
  } catch (const std::filesystem::filesystem_error& e) {
    return Finish(ReportError(json, IoError(e.what()), nlohmann::json::object(), kExitIo));
  } catch (const std::bad_alloc&) {
    // Whatever an allocation anywhere in a command could not get: its own code, so a CI job can
    // tell "needs a bigger machine" from a bad model or a bad command line.
    const Status oom =
        OutOfMemory("the model or its inputs need more memory than this machine can allocate");
    return json ? Finish(ReportError(true, oom)) : ReportError(false, oom);
  } catch (const std::exception& e) {
    return Finish(
        ReportError(json, InvalidGraph(e.what()), nlohmann::json::object(), kExitBadModel));
  }
  return Finish(*exit_code);
}

}  // namespace ortc::cli
