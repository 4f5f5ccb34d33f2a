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
  kExitBackend = 7,      // a driver, library or toolchain a backend needs is missing or failed
  kExitOutOfMemory = 8,  // an allocation failed
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
    case StatusCode::kModelRequiresCompilation:
      return kExitUnsupported;
    case StatusCode::kEpFail:
      return kExitBackend;
    case StatusCode::kOutOfMemory:
      return kExitOutOfMemory;
    default:  // INVALID_GRAPH and anything unlisted
      return kExitBadModel;
  }
}

inline constexpr const char* kExitCodeHelp =
    "Exit codes: 0 success, 2 bad command line, 3 invalid model, 4 model not supported as asked\n"
    "(no backend for a node, too many partitions, a binary this device cannot run, recompilation\n"
    "required), 5 file not found or I/O error, 6 verify found outputs beyond tolerance, 7 a\n"
    "driver, library or toolchain a backend needs is missing or failed (no CUDA driver, NVRTC),\n"
    "8 out of memory (the model or its inputs need more memory than the machine can allocate).";

}  // namespace ortc::cli
