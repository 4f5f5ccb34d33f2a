// Error reporting shared by the commands.
#include "cli/report_error.h"

#include <iostream>

#include "cli/exit_codes.h"

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

}  // namespace ortc::cli
