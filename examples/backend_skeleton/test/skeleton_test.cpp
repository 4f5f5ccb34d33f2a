// Standalone test of the npu backend skeleton, through the plugin ABI alone: it builds graph views
// by hand, asks the compile side which nodes it takes and compiles the groups, loads and runs
// the programs through the runtime side, and compares every output with a float reference
// computed here (independently of the plugin's integer kernels). It also checks the version
// gate, corrupt programs, the ABI version refusal and the text buffer rules. No test framework:
// the skeleton must build from the ABI header and the standard library alone.
//
// main lives here and calls the tests in a fixed order; the rest of test/ holds the parts:
//   test_support    CHECK/REQUIRE and their counters, shared helpers, the entry points
//   graph_builder   graph views built by hand
//   reference       the float reference
//   plugin_driver   the host's side: capability, compile, load, run, compare
//   test_graphs     the QDQ Conv and MatMul units
//   compile_test, run_test, robustness_test, device_test: the tests (declared in tests.h)
#include <cfenv>
#include <cstdint>
#include <cstdio>

#include "tests.h"

using namespace npu_test;

namespace {
int g_log_messages = 0;
}  // namespace

int main() {
  CHECK(std::fegetround() == FE_TONEAREST);  // the reference rounds half to even through it
  TestAbiMismatch();
  OrtcHostApi host{ORTC_BACKEND_ABI_VERSION, sizeof(OrtcHostApi), nullptr,
                   [](void*, int32_t, const char*) { ++g_log_messages; }};
  Plugin p;
  if (!CHECK(ortc_backend_compiler_create(ORTC_BACKEND_ABI_VERSION, &host, &p.compiler) ==
             ORTC_PLUGIN_OK) ||
      !CHECK(ortc_backend_create(ORTC_BACKEND_ABI_VERSION, &host, &p.backend) == ORTC_PLUGIN_OK)) {
    std::fprintf(stderr, "skeleton_test: cannot create the plugin's tables\n");
    return 1;
  }
  TestTables(p);
  TestOptions(p);
  TestHandWorked(p);
  TestConv(p, false);
  TestConv(p, true);
  TestMatMul(p);
  TestChain(p);
  TestRefusals(p);
  TestRuntimeErrors(p);
  TestDevice(p);
  TestVersionGate(p);
  CHECK(g_log_messages > 0);
  ortc_backend_release(p.backend);
  ortc_backend_compiler_release(p.compiler);

  if (g_failures) {
    std::printf("skeleton_test: %d of %d checks failed\n", g_failures, g_checks);
    return 1;
  }
  std::printf("skeleton_test: %d checks passed\n", g_checks);
  return 0;
}
