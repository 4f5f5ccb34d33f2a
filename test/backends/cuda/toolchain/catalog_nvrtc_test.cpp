// Every kernel of the catalog compiles with NVRTC: one translation unit per family, a cubin for
// each default architecture (an ELF naming every kernel) and PTX for compute_90 (an .entry per
// kernel), and kernels merged into one launch (codegen/merged_kernels.h). One test case per
// family and target so they run in parallel.
#include <catch2/catch.hpp>

#include <chrono>

#include "catalog.h"
#include "cuda/compile/codegen/merged_kernels.h"
#include "cuda/compile/toolchain/nvrtc.h"

namespace ortc::test::cuda {
namespace {

namespace tc = backends::cuda::toolchain;

void CompileKernels(const std::string& family, const std::vector<cg::KernelSource>& kernels,
                    const std::string& target) {
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

void CompileFamily(const std::string& family, const std::string& target) {
  auto info = tc::LoadNvrtc();
  if (!info.ok()) {
    WARN("SKIP: " << info.status().message());
    return;
  }
  std::vector<cg::KernelSource> kernels;
  if (family == "merged") {
    // Neighbouring kernels of the families that may share a launch, merged in pairs.
    std::vector<cg::KernelSource> mergeable;
    for (const char* f : {"elementwise", "data_movement", "indexing", "channels_last"}) {
      for (const auto& e : FamilyEntries(f)) {
        auto k = Emit(e);
        INFO(e.name);
        REQUIRE(k.ok());
        if (cg::SharedLaunchRefusal(*k).empty()) mergeable.push_back(std::move(k).value());
      }
    }
    for (size_t i = 0; i + 1 < mergeable.size(); i += 2) {
      if (mergeable[i].block != mergeable[i + 1].block) continue;
      auto m = cg::MergeKernels(mergeable[i].name + "_merged", {mergeable[i], mergeable[i + 1]});
      INFO(m.status().message());
      REQUIRE(m.ok());
      kernels.push_back(std::move(m).value());
    }
    REQUIRE(kernels.size() > 100);
  } else {
    const std::vector<CatalogEntry> entries = FamilyEntries(family);
    REQUIRE(!entries.empty());  // every family that generates kernels lists what it generates
    for (const auto& e : entries) {
      auto k = Emit(e);
      INFO(e.name);
      REQUIRE(k.ok());
      kernels.push_back(std::move(k).value());
    }
  }
  CompileKernels(family, kernels, target);
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
ORTC_NVRTC_CASES("merged")

}  // namespace
}  // namespace ortc::test::cuda
