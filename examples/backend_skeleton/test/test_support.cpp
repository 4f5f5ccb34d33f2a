// The shared test support: the check counters and reporting, the deterministic random sequence,
// and a compile-time check that the entry points declared here have the ABI's pointer types.
#include "test_support.h"

#include <cstdio>
#include <cstring>
#include <type_traits>

static_assert(std::is_same_v<decltype(&ortc_backend_create), OrtcBackendCreateFn>);
static_assert(std::is_same_v<decltype(&ortc_backend_release), OrtcBackendReleaseFn>);
static_assert(std::is_same_v<decltype(&ortc_backend_compiler_create), OrtcBackendCompilerCreateFn>);
static_assert(
    std::is_same_v<decltype(&ortc_backend_compiler_release), OrtcBackendCompilerReleaseFn>);

namespace npu_test {

int g_checks = 0;
int g_failures = 0;

bool Check(bool ok, const char* what, const char* file, int line, const std::string& detail) {
  ++g_checks;
  if (!ok) {
    ++g_failures;
    const char* slash = std::strrchr(file, '/');
    std::fprintf(stderr, "%s:%d: CHECK failed: %s%s%s\n", slash ? slash + 1 : file, line, what,
                 detail.empty() ? "" : "\n    ", detail.c_str());
  }
  return ok;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

uint64_t Elements(const std::vector<int64_t>& dims) {
  uint64_t n = 1;
  for (const int64_t d : dims) n *= static_cast<uint64_t>(d);
  return n;
}

namespace {
uint32_t g_seed = 12345;  // the one random sequence, advanced by every draw
}  // namespace

int32_t Random(int32_t lo, int32_t hi) {
  g_seed = g_seed * 1664525u + 1013904223u;
  return lo + static_cast<int32_t>((g_seed >> 8) % static_cast<uint32_t>(hi - lo + 1));
}

}  // namespace npu_test
