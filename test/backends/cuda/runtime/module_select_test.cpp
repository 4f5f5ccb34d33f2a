// The plugin's module choice (pure; compiled into this test from the plugin's sources).
#include <catch2/catch.hpp>

#include "module_select.h"

namespace ortc::test {

using cuda_rt::ModuleRef;
using cuda_rt::SelectModule;

TEST_CASE("module choice: exact cubin over same-major cubin over PTX") {
  const std::vector<ModuleRef> m = {
      {"sm_80", false}, {"sm_86", false}, {"sm_90", false}, {"compute_90", true}};
  auto c = SelectModule(m, 86);
  CHECK(c.index == 1);
  CHECK_FALSE(c.jit);
  c = SelectModule(m, 89);  // sm_86 is the newest same-major cubin below 8.9
  CHECK(c.index == 1);
  c = SelectModule(m, 100);  // a newer GPU: JIT the PTX
  CHECK(c.index == 3);
  CHECK(c.jit);
}

TEST_CASE("module choice: nothing fits names both sides") {
  const std::vector<ModuleRef> m = {{"sm_90", false}, {"compute_90", true}};
  const auto c = SelectModule(m, 80);
  CHECK(c.index == -1);
  CHECK_THAT(c.reason, Catch::Contains("sm_90, compute_90 only; this GPU is sm_80") &&
                           Catch::Contains("--target-arch sm_80"));
  CHECK(SelectModule({{"sm_90a", false}}, 91).index == -1);
  CHECK(SelectModule({{"sm_90a", false}}, 90).index == 0);
  CHECK(SelectModule({{"garbage", false}}, 80).index == -1);
}

}  // namespace ortc::test
