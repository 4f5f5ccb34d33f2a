// The core runtime's plugin loader against fake plugins built by this test (wrong ABI version,
// missing symbol, refusing the host) and against the real CUDA plugin on this machine.
#include <dlfcn.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "plugin/backend_library.h"

namespace ortc::test {
namespace {

std::string OpenError(const std::string& path, uint32_t host_version = ORTC_BACKEND_ABI_VERSION) {
  auto lib = plugin::BackendLibrary::Open(path, host_version);
  REQUIRE_FALSE(lib.ok());
  return lib.status().ToString();
}

// True when this machine has a CUDA driver (then driverless expectations do not apply).
bool HasDriver() {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h) dlclose(h);
  return h != nullptr;
}

}  // namespace

TEST_CASE("plugin loader refuses a table with another ABI version") {
  const std::string msg = OpenError(ORTC_FAKE_WRONG_ABI);
  CHECK_THAT(msg, Catch::Contains("INVALID_GRAPH") &&
                      Catch::Contains("implements backend ABI version " +
                                      std::to_string(ORTC_BACKEND_ABI_VERSION + 1)) &&
                      Catch::Contains("this runtime needs version " +
                                      std::to_string(ORTC_BACKEND_ABI_VERSION)));
}

TEST_CASE("plugin loader refuses a library missing an ABI symbol") {
  CHECK_THAT(OpenError(ORTC_FAKE_MISSING_RELEASE),
             Catch::Contains("is not an ortc backend plugin") &&
                 Catch::Contains("does not export ortc_backend_release"));
}

TEST_CASE("plugin loader reports a plugin refusing the host ABI version") {
  CHECK_THAT(OpenError(ORTC_FAKE_REFUSES_HOST),
             Catch::Contains("refused this runtime's backend ABI version " +
                             std::to_string(ORTC_BACKEND_ABI_VERSION)));
}

TEST_CASE("the CUDA plugin refuses a host ABI version it does not know") {
  const std::string path = std::string(ORTC_CUDA_PLUGIN_DIR) + "/libortc_backend_cuda.so";
  CHECK_THAT(OpenError(path, ORTC_BACKEND_ABI_VERSION + 1),
             Catch::Contains("refused this runtime's backend ABI version " +
                             std::to_string(ORTC_BACKEND_ABI_VERSION + 1)));
}

TEST_CASE("a path that is not a library is a miss, a broken library an error") {
  auto missing = plugin::BackendLibrary::Open(std::string(ORTC_CUDA_PLUGIN_DIR) + "/nope.so");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kNoSuchFile);
  // A file that is there but is not a shared object.
  auto broken = plugin::BackendLibrary::Open(ORTC_NOT_A_LIBRARY);
  REQUIRE_FALSE(broken.ok());
  CHECK(broken.status().code() == StatusCode::kInvalidGraph);
}

TEST_CASE("search order: ORTC_BACKEND_PATH, executable folder, then the soname") {
  setenv("ORTC_BACKEND_PATH", "/opt/a:/opt/b", 1);
  const auto paths = plugin::CandidatePaths("cuda");
  REQUIRE(paths.size() >= 4);
  CHECK(paths[0] == "/opt/a/libortc_backend_cuda.so");
  CHECK(paths[1] == "/opt/b/libortc_backend_cuda.so");
  CHECK(paths.back() == "libortc_backend_cuda.so");
  setenv("ORTC_BACKEND_PATH", ORTC_CUDA_PLUGIN_DIR, 1);
}

TEST_CASE("the CUDA plugin loads here and describes the device") {
  auto lib =
      plugin::BackendLibrary::Open(std::string(ORTC_CUDA_PLUGIN_DIR) + "/libortc_backend_cuda.so");
  REQUIRE(lib.ok());
  CHECK((*lib)->name() == "cuda");
  auto text = (*lib)->DescribeDevice();
  REQUIRE(text.ok());
  const auto j = nlohmann::json::parse(*text);
  if (HasDriver()) {
    WARN("a CUDA driver is present: driverless expectations skipped; description: " << *text);
    CHECK(j.contains("driver_version"));
    return;
  }
  CHECK(j.value("driver_version", -1) == 0);
  CHECK_THAT(j.value("unavailable_reason", std::string()),
             Catch::StartsWith("no CUDA driver found (libcuda.so.1:"));
  // The libraries are looked up without a driver: each is either found (the major the plugin
  // asks for) or missing with the loader's reason.
  if (j.contains("cudnn_version"))
    CHECK_THAT(j["cudnn_version"].get<std::string>(), Catch::StartsWith("9."));
  else
    CHECK_THAT(j.value("cudnn_reason", std::string()), Catch::Contains("libcudnn.so.9"));
  if (j.contains("cublas_version"))
    CHECK_THAT(j["cublas_version"].get<std::string>(), Catch::StartsWith("13."));
  else
    CHECK_THAT(j.value("cublas_reason", std::string()), Catch::Contains("libcublasLt.so.13"));
}

}  // namespace ortc::test
