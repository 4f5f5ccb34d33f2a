// Every kernel of the catalog compiles with NVRTC: one translation unit per family, a cubin for
// each default architecture (an ELF naming every kernel) and PTX for compute_90 (an .entry per
// kernel). One test case per family and target so they run in parallel.
#include <catch2/catch.hpp>

#include <chrono>

#include "catalog.h"
#include "cuda/compile/toolchain/nvrtc.h"

namespace ortc::test::cuda {
namespace {

namespace tc = backends::cuda::toolchain;

void CompileFamily(const std::string& family, const std::string& target) {
  auto info = tc::LoadNvrtc();
  if (!info.ok()) {
    WARN("SKIP: " << info.status().message());
    return;
  }
  const std::vector<CatalogEntry> entries = FamilyEntries(family);
  REQUIRE(!entries.empty());  // every family that generates kernels lists what it generates
  std::vector<cg::KernelSource> kernels;
  for (const auto& e : entries) {
    auto k = Emit(e);
    INFO(e.name);
    REQUIRE(k.ok());
    kernels.push_back(std::move(k).value());
  }
  const bool ptx = target.rfind("compute_", 0) == 0;
  const auto start = std::chrono::steady_clock::now();
  auto images = tc::CompileModule(
      cg::TranslationUnit(kernels),
      ptx ? std::vector<std::string>{} : std::vector<std::string>{target}, ptx ? target : "");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!images.ok()) FAIL(images.status().message().substr(0, 6000));
  REQUIRE(images.value().size() == 1);
  const tc::ModuleImage& image = images.value()[0];
  CHECK(image.target == target);
  CHECK(image.is_ptx == ptx);
  if (ptx) {
    CHECK(image.bytes.find(".target " + target.substr(8).insert(0, "sm_")) != std::string::npos);
  } else {
    CHECK(image.bytes.rfind("\x7f"
                            "ELF",
                            0) == 0);
  }
  int missing = 0;
  for (const auto& k : kernels) {
    // PTX declares each entry; a cubin's symbol table holds each kernel's name.
    const std::string needle = ptx ? ".entry " + k.name + "(" : std::string(k.name) + '\0';
    if (image.bytes.find(needle) == std::string::npos) {
      ++missing;
      UNSCOPED_INFO("missing " << k.name);
    }
  }
  CHECK(missing == 0);
  WARN(family << " for " << target << ": " << kernels.size() << " kernels, " << image.bytes.size()
              << " bytes, NVRTC " << seconds << " s");
}

#define ORTC_NVRTC_CASES(family)                                                               \
  TEST_CASE("NVRTC compiles every " family " kernel for sm_80", "[cuda][nvrtc]") {             \
    CompileFamily(family, "sm_80");                                                            \
  }                                                                                            \
  TEST_CASE("NVRTC compiles every " family " kernel for sm_86", "[cuda][nvrtc]") {             \
    CompileFamily(family, "sm_86");                                                            \
  }                                                                                            \
  TEST_CASE("NVRTC compiles every " family " kernel for sm_89", "[cuda][nvrtc]") {             \
    CompileFamily(family, "sm_89");                                                            \
  }                                                                                            \
  TEST_CASE("NVRTC compiles every " family " kernel for sm_90", "[cuda][nvrtc]") {             \
    CompileFamily(family, "sm_90");                                                            \
  }                                                                                            \
  TEST_CASE("NVRTC compiles every " family " kernel to PTX for compute_90", "[cuda][nvrtc]") { \
    CompileFamily(family, "compute_90");                                                       \
  }

ORTC_NVRTC_CASES("elementwise")
ORTC_NVRTC_CASES("normalization")
ORTC_NVRTC_CASES("reduction")
ORTC_NVRTC_CASES("data_movement")
ORTC_NVRTC_CASES("pooling")
ORTC_NVRTC_CASES("channels_last")
ORTC_NVRTC_CASES("scan")
ORTC_NVRTC_CASES("indexing")

}  // namespace
}  // namespace ortc::test::cuda
