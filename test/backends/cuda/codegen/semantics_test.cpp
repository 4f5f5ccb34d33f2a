// Generated kernels' semantics without a GPU: each family's catalog is generated into one
// translation unit, compiled as host C++ with the shim, and every entry is compared with the CPU
// runtime kernels on random data (tolerances: entry_runner.cpp).
#include <catch2/catch.hpp>

#include "entry_runner.h"

namespace ortc::test::cuda {
namespace {

void CheckFamily(const std::string& family) {
  const std::vector<CatalogEntry> entries = FamilyEntries(family);
  REQUIRE(!entries.empty());  // every family that generates kernels lists what it generates
  std::vector<cg::KernelSource> kernels;
  for (const auto& e : entries) {
    auto k = Emit(e);
    INFO(e.name);
    REQUIRE(k.ok());
    if (!k.ok()) continue;
    REQUIRE(k.value().name == e.name);
    kernels.push_back(std::move(k).value());
  }
  auto module = HostModule::Compile(kernels);
  INFO(family);
  REQUIRE(module.ok());
  int compared = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    INFO(entries[i].name);
    auto r = CheckEntry(entries[i], kernels[i], module.value(), 1234 + static_cast<unsigned>(i));
    if (!r.ok()) FAIL_CHECK(r.status().message());
    if (!r.ok()) continue;
    if (!r.value().skipped.empty()) {
      WARN(entries[i].name << ": not compared with the CPU: " << r.value().skipped);
      continue;
    }
    CHECK(r.value().mismatch == "");
    CHECK(r.value().elements > 0);
    ++compared;
  }
  WARN(family << ": " << compared << " of " << entries.size()
              << " catalog kernels agree with the CPU kernels");
}

TEST_CASE("elementwise kernels match the CPU kernels", "[cuda][semantics]") {
  CheckFamily("elementwise");
}
TEST_CASE("normalization kernels match the CPU kernels", "[cuda][semantics]") {
  CheckFamily("normalization");
}
TEST_CASE("reduction kernels match the CPU kernels", "[cuda][semantics]") {
  CheckFamily("reduction");
}
TEST_CASE("data movement kernels match the CPU kernels", "[cuda][semantics]") {
  CheckFamily("data_movement");
}
TEST_CASE("pooling kernels match the CPU kernels", "[cuda][semantics]") {
  CheckFamily("pooling");
}
TEST_CASE("channels-last kernels match the CPU kernels", "[cuda][semantics]") {
  CheckFamily("channels_last");
}
TEST_CASE("scan kernels match the CPU kernels", "[cuda][semantics]") {
  CheckFamily("scan");
}
TEST_CASE("indexing kernels match the CPU kernels", "[cuda][semantics]") {
  CheckFamily("indexing");
}

}  // namespace
}  // namespace ortc::test::cuda
