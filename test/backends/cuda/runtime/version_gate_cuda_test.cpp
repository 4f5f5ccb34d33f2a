// The CUDA version gate with injected devices: driver presence and version, cubin / PTX fit
// by arch, cuDNN and cuBLAS majors. Expected verdicts follow CUDA's compatibility rules (a
// cubin runs on its major with an equal or higher minor; PTX JITs on its arch or newer).
#include <catch2/catch.hpp>

#include "loader/version_gate.h"

namespace ortc::test {
namespace {

DeviceDescription Gpu(const std::string& arch, int driver = 13000,
                      const std::string& cudnn = "9.1.0") {
  DeviceDescription d = DeviceDescription::DetectHost();
  d.cuda_driver_version = driver;
  d.cuda_archs = {arch};
  d.cudnn_version = cudnn;
  d.cublas_version = "13.0.2";
  d.cuda_unavailable_reason.clear();
  return d;
}

loader::CudaBinaryFacts Bin(std::vector<std::string> targets, int min_driver = 13000,
                            const std::string& cudnn = "") {
  loader::CudaBinaryFacts f;
  f.targets = std::move(targets);
  f.min_driver = min_driver;
  f.cudnn_version = cudnn;
  return f;
}

// The refusal's message. A binary that does not fit the device is NOT_IMPLEMENTED (exit 4); a
// driver, device or library missing on the machine is EP_FAIL (exit 7).
std::string Refusal(const loader::CudaBinaryFacts& bin, const DeviceDescription& dev,
                    StatusCode expected = StatusCode::kNotImplemented) {
  auto v = loader::GateCuda(bin, dev, "EPContext node 'n'");
  REQUIRE_FALSE(v.ok());
  CHECK(v.status().code() == expected);
  return v.status().message();
}

}  // namespace

TEST_CASE("cuda gate: sm_80 device, sm_90-only cubins, no PTX -> unsupported naming both") {
  const std::string m = Refusal(Bin({"sm_90"}), Gpu("sm_80"));
  CHECK_THAT(m, Catch::Contains("unsupported") &&
                    Catch::Contains("compiled for sm_90 only; this GPU is sm_80: recompile with "
                                    "--target-arch sm_80"));
}

TEST_CASE("cuda gate: sm_80 device with PTX compute_80 -> prefer recompilation (JIT)") {
  auto v = loader::GateCuda(Bin({"sm_90", "compute_80"}), Gpu("sm_80"), "n");
  REQUIRE(v.ok());
  CHECK(v->verdict == Verdict::kPreferRecompilation);
  CHECK_THAT(v->reason, Catch::Contains("JIT from PTX compute_80") &&
                            Catch::Contains("recompile with --target-arch sm_80"));
}

TEST_CASE("cuda gate: sm_80 device with PTX compute_90 only -> unsupported") {
  const std::string m = Refusal(Bin({"sm_90", "compute_90"}), Gpu("sm_80"));
  CHECK_THAT(m, Catch::Contains("compiled for sm_90, compute_90 only; this GPU is sm_80"));
}

TEST_CASE("cuda gate: the device's own cubin -> optimal") {
  auto v =
      loader::GateCuda(Bin({"sm_80", "sm_86", "sm_89", "sm_90", "compute_90"}), Gpu("sm_89"), "n");
  REQUIRE(v.ok());
  CHECK(v->verdict == Verdict::kOptimal);
  CHECK(v->reason.empty());
}

TEST_CASE("cuda gate: sm_86 device with an sm_80 cubin -> prefer recompilation") {
  auto v = loader::GateCuda(Bin({"sm_80"}), Gpu("sm_86"), "n");
  REQUIRE(v.ok());
  CHECK(v->verdict == Verdict::kPreferRecompilation);
  CHECK_THAT(v->reason, Catch::Contains("sm_80 cubin") && Catch::Contains("sm_86") &&
                            Catch::Contains("--target-arch sm_86"));
}

TEST_CASE("cuda gate: a newer minor cubin does not run on an older device") {
  // sm_86 code on an sm_80 device: same major, but cubins only run forward.
  CHECK_THAT(Refusal(Bin({"sm_86"}), Gpu("sm_80")), Catch::Contains("this GPU is sm_80"));
  // Arch-specific sm_90a runs on sm_90 only, never as a same-major fallback.
  CHECK_THAT(Refusal(Bin({"sm_90a"}), Gpu("sm_91")), Catch::Contains("compiled for sm_90a only"));
}

TEST_CASE("cuda gate: driver older than the recorded minimum -> update the driver") {
  const std::string m = Refusal(Bin({"sm_80"}, 13000), Gpu("sm_80", 12040));
  CHECK_THAT(m, Catch::Contains("needs CUDA driver 13.0 (13000) or newer") &&
                    Catch::Contains("this machine has 12.4 (12040)") &&
                    Catch::Contains("update the driver"));
}

TEST_CASE("cuda gate: no driver at all -> unsupported with the reason") {
  DeviceDescription d = DeviceDescription::DetectHost();
  d.cuda_unavailable_reason =
      "no CUDA driver found (libcuda.so.1: cannot open shared object file: No such file or "
      "directory)";
  const std::string m = Refusal(Bin({"sm_80"}), d, StatusCode::kEpFail);
  CHECK_THAT(m, Catch::Contains("verdict unsupported: no CUDA driver found (libcuda.so.1: "
                                "cannot open shared object file"));
  // No reason recorded: the headline alone; a missing plugin is named as such.
  d.cuda_unavailable_reason.clear();
  CHECK_THAT(Refusal(Bin({"sm_80"}), d, StatusCode::kEpFail),
             Catch::EndsWith("verdict unsupported: no CUDA driver found"));
  d.cuda_unavailable_reason = "the CUDA backend library is not available (x)";
  CHECK_THAT(Refusal(Bin({"sm_80"}), d, StatusCode::kEpFail),
             Catch::Contains("unsupported: the CUDA backend library is not available (x)"));
}

TEST_CASE("cuda gate: a driver without a device") {
  DeviceDescription d = Gpu("sm_80");
  d.cuda_archs.clear();
  d.cuda_unavailable_reason = "cuInit: CUDA_ERROR_NO_DEVICE";
  CHECK_THAT(Refusal(Bin({"sm_80"}), d, StatusCode::kEpFail),
             Catch::Contains("no CUDA device found (cuInit: CUDA_ERROR_NO_DEVICE)"));
}

TEST_CASE("cuda gate: cuDNN 8 on the device, binary planned with cuDNN 9 -> unsupported") {
  const std::string m = Refusal(Bin({"sm_80"}, 13000, "9.1.0"), Gpu("sm_80", 13000, "8.9.7"));
  CHECK_THAT(m, Catch::Contains("built against cuDNN 9.1.0; this machine has cuDNN 8.9.7") &&
                    Catch::Contains("install cuDNN 9"));
}

TEST_CASE("cuda gate: cuDNN missing when the program needs it -> unsupported with the reason") {
  DeviceDescription d = Gpu("sm_80", 13000, "");
  d.cudnn_reason = "libcudnn.so.9: cannot open shared object file";
  const std::string m = Refusal(Bin({"sm_80"}, 13000, "9.1.0"), d, StatusCode::kEpFail);
  CHECK_THAT(m, Catch::Contains("calls cuDNN 9.1.0 but cuDNN was not found (libcudnn.so.9") &&
                    Catch::Contains("install cuDNN 9"));
}

TEST_CASE("cuda gate: cuDNN missing but not needed -> fine") {
  auto v = loader::GateCuda(Bin({"sm_80"}), Gpu("sm_80", 13000, ""), "n");
  REQUIRE(v.ok());
  CHECK(v->verdict == Verdict::kOptimal);
}

TEST_CASE("cuda gate: device description JSON carries the CUDA fields") {
  auto d = DeviceDescription::FromJson(
      R"({"cuda": {"driver_version": 12040, "archs": ["sm_86"], "cudnn_version": "8.9.7",
                   "cublas_version": "12.4.5", "cudnn_reason": ""}})");
  REQUIRE(d.ok());
  CHECK(d->cuda_driver_version == 12040);
  CHECK(d->cuda_archs == std::vector<std::string>{"sm_86"});
  CHECK(d->cudnn_version == "8.9.7");
  CHECK(d->cublas_version == "12.4.5");
  auto none = DeviceDescription::FromJson(R"({"cpu": {"isa": ["avx2"]}})");
  REQUIRE(none.ok());
  CHECK(none->cuda_driver_version == 0);
  CHECK_THAT(none->cuda_unavailable_reason, Catch::Contains("no \"cuda\" object"));
  CHECK_FALSE(DeviceDescription::FromJson(R"({"cuda": {"archs": 3}})").ok());
  CHECK_FALSE(DeviceDescription::FromJson(R"({"cuda": []})").ok());
}

TEST_CASE("cuda gate: device description fields are checked by type and form, by name") {
  // Each wrong field is refused with its name, never read as "library not found" or accepted.
  const std::pair<const char*, const char*> cases[] = {
      {R"({"cuda": {"cudnn_version": 9}})", "cuda.cudnn_version must be a string"},
      {R"({"cuda": {"cudnn_version": "9.19.0.junk"}})", "'9.19.0.junk' is not a version"},
      {R"({"cuda": {"cublas_version": "13.x"}})", "cuda.cublas_version '13.x' is not a version"},
      {R"({"cuda": {"archs": [90]}})", "cuda.archs must be a list of strings"},
      {R"({"cuda": {"archs": ["ampere"]}})", "'ampere' is not an architecture like sm_90"},
      {R"({"cpu": {"little_endian": "yes"}})", "cpu.little_endian must be true or false"},
      {R"({"cpu": {"isa": "avx2"}})", "cpu.isa must be a list of strings"},
      {R"({"cpu": {"arch": 64}})", "cpu.arch must be a string"},
      {R"({"cuda": {"driver_version": 1e400}})", "not valid JSON"},
      {R"({"cuda": {"driver_version": NaN}})", "not valid JSON"},
  };
  for (const auto& [json, why] : cases) {
    INFO(json);
    auto d = DeviceDescription::FromJson(json);
    REQUIRE_FALSE(d.ok());
    CHECK(d.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(d.status().message(), Catch::Contains(why));
  }
  auto ok = DeviceDescription::FromJson(R"({"cuda": {"cudnn_version": "9", "archs": ["sm_120"]}})");
  CHECK(ok.ok());
}

}  // namespace ortc::test
