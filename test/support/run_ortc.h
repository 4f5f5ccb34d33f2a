// Runs the real `ortc` binary in tests and captures its stdout and exit code.
#pragma once

#include <string>

namespace ortc::test {

struct RunResult {
  int exit_code;
  std::string out;
};

// `args` is appended to the binary's path as one shell command line; stderr is discarded
// unless `keep_stderr`, in which case it is merged into `out`.
RunResult RunOrtc(const std::string& args, bool keep_stderr = false);

std::string ReadFile(const std::string& path);

}  // namespace ortc::test
