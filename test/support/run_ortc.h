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
// The same with `prefix` before the binary's path (e.g. "env -u LD_LIBRARY_PATH").
RunResult RunOrtcWith(const std::string& prefix, const std::string& args, bool keep_stderr);

std::string ReadFile(const std::string& path);

// True when a compile failed only because NVRTC could not be loaded (the CUDA toolkit is absent):
// CUDA tests then skip. Any other failure, an NVRTC compile error included, is a failure.
inline bool NvrtcNotFound(const RunResult& r) {
  return r.exit_code != 0 &&
         r.out.find("NVRTC (CUDA toolkit runtime compiler) not found") != std::string::npos;
}

}  // namespace ortc::test
