// NVRTC loading and compilation: the version and library found, the clear error when the
// library is missing (checked in a child process, since loading happens once per process), and
// compile errors that carry NVRTC's log.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cuda/compile/toolchain/nvrtc.h"

namespace ortc::backends::cuda::toolchain {
namespace {

// NVRTC is part of the CUDA toolkit these tests are built with; when it cannot be loaded the
// compile tests say so and stop.
bool NvrtcOrSkip() {
  auto info = LoadNvrtc();
  if (!info.ok()) WARN("SKIP: " << info.status().message());
  return info.ok();
}

TEST_CASE("NVRTC loads through dlopen and reports its version", "[cuda][nvrtc]") {
  if (!NvrtcOrSkip()) return;
  const NvrtcInfo info = LoadNvrtc().value();
  CHECK(info.major >= 12);
  CHECK_FALSE(info.library.empty());
  WARN("NVRTC " << info.major << "." << info.minor << " from " << info.library);
}

TEST_CASE("NVRTC tells of each target as its compile starts", "[cuda][nvrtc]") {
  if (!NvrtcOrSkip()) return;
  std::vector<std::string> heard;
  auto images = CompileModule(
      "extern \"C\" __global__ void k() {}", {"sm_80", "sm_90"}, "compute_90",
      [&](const std::string& target, int done, int total) {
        heard.push_back(target + " " + std::to_string(done) + "/" + std::to_string(total));
      });
  REQUIRE(images.ok());
  CHECK(heard == std::vector<std::string>{"sm_80 0/3", "sm_90 1/3", "compute_90 2/3"});
}

TEST_CASE("NVRTC compiles a kernel to cubin and PTX and reports errors with the log",
          "[cuda][nvrtc]") {
  if (!NvrtcOrSkip()) return;
  const std::string ok = "extern \"C\" __global__ void twice(float* x) { x[threadIdx.x] *= 2.f; }";
  auto images = CompileModule(ok, {"sm_80"}, "compute_90");
  REQUIRE(images.ok());
  REQUIRE(images.value().size() == 2);
  CHECK(images.value()[0].target == "sm_80");
  CHECK_FALSE(images.value()[0].is_ptx);
  CHECK(images.value()[0].bytes.rfind("\x7f"
                                      "ELF",
                                      0) == 0);
  CHECK(images.value()[1].is_ptx);
  CHECK(images.value()[1].bytes.find(".entry twice(") != std::string::npos);
  CHECK(images.value()[1].bytes.find(".target sm_90") != std::string::npos);

  auto bad = CompileModule("extern \"C\" __global__ void broken() { undeclared_name = 1; }",
                           {"sm_80"}, "");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("undeclared_name"));
  CHECK_THAT(bad.status().message(), Catch::Contains("sm_80"));

  CHECK_FALSE(CompileModule(ok, {"compute_80"}, "").ok());
  CHECK_FALSE(CompileModule(ok, {}, "sm_90").ok());
}

// Run only by the test below, in a child process whose ORTC_NVRTC_LIBRARY points nowhere.
TEST_CASE("NVRTC child process with a library path that does not exist", "[.][nvrtc_child]") {
  REQUIRE(std::getenv("ORTC_NVRTC_LIBRARY") != nullptr);
  auto info = LoadNvrtc();
  REQUIRE_FALSE(info.ok());
  CHECK(info.status().code() == StatusCode::kEpFail);  // the machine's set-up: exit 7
  CHECK_THAT(info.status().message(),
             Catch::Contains("NVRTC (CUDA toolkit runtime compiler) not found: install the CUDA "
                             "toolkit or set ORTC_NVRTC_LIBRARY"));
  auto compiled = CompileModule("extern \"C\" __global__ void k() {}", {"sm_80"}, "");
  REQUIRE_FALSE(compiled.ok());
  CHECK(compiled.status().code() == StatusCode::kEpFail);
  std::printf("child checked: %s\n", info.status().message().c_str());
}

TEST_CASE("NVRTC missing gives a clear EP_FAIL error, not a crash", "[cuda][nvrtc]") {
  const std::string cmd = "ORTC_NVRTC_LIBRARY=/nonexistent/libnvrtc.so.13 /proc/" +
                          std::to_string(getpid()) + "/exe '[nvrtc_child]' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[512];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int rc = pclose(p);
  INFO(out);
  CHECK(rc == 0);
  CHECK_THAT(out,
             Catch::Contains("child checked: NVRTC (CUDA toolkit runtime compiler) not found"));
  CHECK_THAT(out, Catch::Contains("/nonexistent/libnvrtc.so.13"));
  CHECK_THAT(out, Catch::Contains("All tests passed"));
}

}  // namespace
}  // namespace ortc::backends::cuda::toolchain
