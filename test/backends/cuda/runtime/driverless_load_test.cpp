// A CUDA ctx model on this machine: without a driver, loading must fail with "no CUDA driver
// found" and an unsupported verdict (never a crash or a linker message); with an injected GPU
// description the gate alone passes and says which verdict the GPU would get.
#include <dlfcn.h>

#include <catch2/catch.hpp>

#include "cuda_fixture.h"
#include "ortc/runtime.h"

namespace ortc::test {
namespace {

namespace fs = std::filesystem;

fs::path TempDir(const std::string& name) {
  const fs::path d =
      fs::temp_directory_path() / ("ortc_cuda_rt_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

fs::path Written(const fs::path& dir, const CudaModelSpec& spec) {
  auto r = WriteCudaModel(dir, spec);
  REQUIRE(r.ok());
  return *r;
}

bool HasDriver() {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h) dlclose(h);
  return h != nullptr;
}

DeviceDescription Gpu(const std::string& arch) {
  auto d = DeviceDescription::FromJson(R"({"cuda": {"driver_version": 13000, "archs": [")" + arch +
                                       R"("], "cudnn_version": "9.1.0"}})");
  REQUIRE(d.ok());
  return *d;
}

}  // namespace

TEST_CASE("driverless: loading a CUDA ctx model fails with no CUDA driver found, unsupported") {
  if (HasDriver()) {
    WARN("SKIP: this machine has a CUDA driver; the driverless expectation does not apply");
    return;
  }
  const fs::path ctx = Written(TempDir("driverless"), {});
  auto s = Session::Create(ctx);
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().code() == StatusCode::kEpFail);
  CHECK_THAT(s.status().message(), Catch::Contains("EPContext node 'cuda_0'") &&
                                       Catch::Contains("verdict unsupported") &&
                                       Catch::Contains("no CUDA driver found (libcuda.so.1"));
  auto report = CheckModel(ctx);
  REQUIRE_FALSE(report.ok());
  CHECK_THAT(report.status().message(), Catch::Contains("no CUDA driver found"));
}

TEST_CASE("driverless: the gate with injected GPUs gives each verdict") {
  // The fixture's binary: sm_80 cubin + compute_90 PTX.
  const fs::path ctx = Written(TempDir("injected"), {});
  SessionOptions o;
  const DeviceDescription a100 = Gpu("sm_80");
  o.device = &a100;
  auto r = CheckModel(ctx, o);
  REQUIRE(r.ok());
  REQUIRE(r->backends.size() == 1);
  CHECK(r->backends[0].backend == "cuda");
  CHECK(r->backends[0].verdict == Verdict::kOptimal);

  const DeviceDescription ada = Gpu("sm_89");
  o.device = &ada;
  r = CheckModel(ctx, o);
  REQUIRE(r.ok());
  CHECK(r->backends[0].verdict == Verdict::kPreferRecompilation);
  o.policy = VerdictPolicy::kRequireOptimal;
  r = CheckModel(ctx, o);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kModelRequiresCompilation);

  const DeviceDescription turing = Gpu("sm_75");
  o.device = &turing;
  o.policy = VerdictPolicy::kAllowPreferRecompilation;
  r = CheckModel(ctx, o);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(),
             Catch::Contains("compiled for sm_80, compute_90 only; this GPU is sm_75"));
}

TEST_CASE("driverless: an injected GPU passes the gate but the plugin cannot load the graph") {
  if (HasDriver()) {
    WARN("SKIP: this machine has a CUDA driver");
    return;
  }
  const fs::path ctx = Written(TempDir("plugin_refuses"), {});
  SessionOptions o;
  const DeviceDescription a100 = Gpu("sm_80");
  o.device = &a100;
  auto s = Session::Create(ctx, o);
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().code() == StatusCode::kEpFail);
  CHECK_THAT(s.status().message(), Catch::Contains("loading graph 'g0' on cuda") &&
                                       Catch::Contains("no CUDA driver found (libcuda.so.1") &&
                                       Catch::Contains("unsupported"));
}

TEST_CASE("driverless: a CPU-only model never needs the CUDA plugin") {
  // DetectHost is what CPU-only loads use: it records that CUDA was not asked.
  const auto d = DeviceDescription::DetectHost();
  CHECK(d.cuda_driver_version == 0);
  CHECK_FALSE(d.cpu_arch.empty());
}

}  // namespace ortc::test
