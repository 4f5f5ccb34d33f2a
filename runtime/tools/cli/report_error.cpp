// Error reporting shared by the commands.
#include "cli/report_error.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <new>

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

}  // namespace

int ParseAndRun(CLI::App& app, int argc, char** argv, const int* exit_code) {
  // A file-size limit (ulimit -f) makes the write that crosses it fail with EFBIG, which the
  // writers report and clean up after, instead of SIGXFSZ killing the process mid-write.
  std::signal(SIGXFSZ, SIG_IGN);
  // The commands run inside parse(); whatever they fail to turn into a Status ends here, as an
  // error and an exit code instead of std::terminate.
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return Finish(app.exit(e) == 0 ? kExitOk : kExitUsage);
  } catch (const std::filesystem::filesystem_error& e) {
    std::cerr << "error: IO_ERROR: " << e.what() << "\n";
    return kExitIo;
  } catch (const std::bad_alloc&) {
    std::cerr << "error: INVALID_GRAPH: out of memory: the model or its inputs need more memory "
                 "than this machine can allocate\n";
    return kExitBadModel;
  } catch (const std::exception& e) {
    std::cerr << "error: INVALID_GRAPH: " << e.what() << "\n";
    return kExitBadModel;
  }
  return Finish(*exit_code);
}

}  // namespace ortc::cli
