// The test's own small framework and the pieces every test file shares: the CHECK/REQUIRE macros
// and their counters, the dtype codes, byte and element helpers, the deterministic random data,
// the plugin's four entry points and the Plugin pair the tests drive. No test framework: the
// skeleton must build from the ABI header and the standard library alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <ortc/ortc_backend_plugin.h>

// The four entry points, as the host finds them with dlsym.
extern "C" {
OrtcPluginStatus ortc_backend_create(uint32_t, const OrtcHostApi*, OrtcBackend**);
void ortc_backend_release(OrtcBackend*);
OrtcPluginStatus ortc_backend_compiler_create(uint32_t, const OrtcHostApi*, OrtcBackendCompiler**);
void ortc_backend_compiler_release(OrtcBackendCompiler*);
}

namespace npu_test {

// ---------------------------------------------------------------------------------------------
// CHECK: counts, reports and goes on; REQUIRE: the same, then leaves the test function.

extern int g_checks;
extern int g_failures;

// Counts one check; on failure prints "<file>:<line>: CHECK failed: <what>" (and the detail).
bool Check(bool ok, const char* what, const char* file, int line, const std::string& detail = "");

#define CHECK(cond) ::npu_test::Check(static_cast<bool>(cond), #cond, __FILE__, __LINE__)
#define CHECK_MSG(cond, detail) \
  ::npu_test::Check(static_cast<bool>(cond), #cond, __FILE__, __LINE__, detail)
#define REQUIRE(cond) \
  if (!::npu_test::Check(static_cast<bool>(cond), #cond, __FILE__, __LINE__)) return

bool Contains(const std::string& text, const std::string& part);

inline constexpr int32_t kFloat = 1, kUint8 = 2, kInt8 = 3, kInt32 = 6;

template <typename T>
std::string Bytes(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

uint64_t Elements(const std::vector<int64_t>& dims);

// Deterministic test data: one sequence for the whole run, so the tests draw the same values
// only when main calls them in the same order.
int32_t Random(int32_t lo, int32_t hi);
template <typename T>
std::vector<T> RandomVector(size_t n, int32_t lo, int32_t hi) {
  std::vector<T> v(n);
  for (auto& e : v) e = static_cast<T>(Random(lo, hi));
  return v;
}

// Both sides of the plugin, as created by main.
struct Plugin {
  OrtcBackendCompiler* compiler = nullptr;
  OrtcBackend* backend = nullptr;
};

}  // namespace npu_test
