// popen-based runner for the ortc binary.
#include "run_ortc.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace ortc::test {

RunResult RunOrtc(const std::string& args, bool keep_stderr) {
  return RunOrtcWith("", args, keep_stderr);
}

RunResult RunOrtcWith(const std::string& prefix, const std::string& args, bool keep_stderr) {
  const std::string cmd = prefix + (prefix.empty() ? "" : " ") + std::string(ORTC_BINARY) + " " +
                          args + (keep_stderr ? " 2>&1" : " 2>/dev/null");
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) throw std::runtime_error("popen failed");
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace ortc::test
