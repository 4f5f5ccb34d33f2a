// Exit codes of the `ortc` command, shared by every subcommand (listed in `ortc --help`).
#pragma once

#include "ortc/status.h"

namespace ortc::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitUsage = 2,        // bad command line
  kExitBadModel = 3,     // the model cannot be read or is invalid
  kExitUnsupported = 4,  // valid model, but ortc cannot place or compile it as asked
  kExitIo = 5,           // reading or writing files failed
  kExitMismatch = 6,     // `ortc verify`: outputs differ beyond the tolerances
};

inline int ExitCodeFor(const Status& s) {
  switch (s.code()) {
    case StatusCode::kOk:
      return kExitOk;
    case StatusCode::kInvalidArgument:
      return kExitUsage;
    case StatusCode::kNoSuchFile:
      return kExitIo;
    case StatusCode::kIoError:
      return kExitIo;
    case StatusCode::kNotImplemented:
      return kExitUnsupported;
    default:
      return kExitBadModel;
  }
}

inline constexpr const char* kExitCodeHelp =
    "Exit codes: 0 success, 2 bad command line, 3 invalid model, 4 model not supported as asked\n"
    "(no backend for a node, too many partitions, recompilation required), 5 file not found or I/O\n"
    "error, 6 verify found outputs beyond tolerance.";

}  // namespace ortc::cli
