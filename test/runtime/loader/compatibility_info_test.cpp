// ONNX Runtime's compatibility strings: what `ortc compile` writes, and the answers the plugin EP
// gives for them on a described device (the version gate's verdicts).
#include "format/compatibility_info.h"
#include "loader/compatibility_check.h"

#include <catch2/catch.hpp>

using ortc::DeviceDescription;
using ortc::format::BinaryFacts;
using ortc::format::CompatibilityInfo;
using ortc::loader::CheckCompatibility;
using Answer = ortc::loader::Compatibility::Answer;

namespace {

DeviceDescription Avx2Cpu() {
  DeviceDescription d;
  d.cpu_arch = "x86_64";
  d.cpu_isa = {"sse4.2", "avx2"};
  return d;
}

}  // namespace

TEST_CASE("compatibility strings name each binary's targets and CUDA requirements", "[compat]") {
  CHECK(CompatibilityInfo({{"cpu", {"generic-le"}, {}}}) == "ortc;format=1.0;cpu=generic-le");
  const BinaryFacts cuda{"cuda",
                         {"sm_80", "compute_90"},
                         {{"cuda.min_driver", "13000"}, {"cudnn", "9.1.0"}, {"cublas", "13.0.0"}}};
  CHECK(CompatibilityInfo({cuda, {"cpu", {"generic-le"}, {}}}) ==
        "ortc;format=1.0;cuda=sm_80,compute_90;cuda_driver=13000;cudnn=9.1.0;cublas=13.0.0;"
        "cpu=generic-le");
}

TEST_CASE("a plugin backend's targets and versions travel in the string, for its plugin",
          "[compat]") {
  const BinaryFacts npu{"npu", {"npu-sim-v1"}, {{"npu_sdk", "1.0"}, {"odd", "a;b"}}};
  const std::string info = CompatibilityInfo({npu, {"cpu", {"generic-le"}, {}}});
  // The version whose text holds a delimiter is left out rather than corrupting the string.
  CHECK(info == "ortc;format=1.0;npu=npu-sim-v1;npu.npu_sdk=1.0;cpu=generic-le");
  const auto parsed = ortc::format::ParseCompatibilityInfo(info);
  CHECK(parsed.has_cpu);
  CHECK_FALSE(parsed.has_cuda);
  REQUIRE(parsed.plugins.size() == 1);
  CHECK(parsed.plugins[0].backend == "npu");
  CHECK(parsed.plugins[0].hardware_targets == std::vector<std::string>{"npu-sim-v1"});
  CHECK(parsed.plugins[0].versions ==
        std::vector<std::pair<std::string, std::string>>{{"npu_sdk", "1.0"}});
  // CPU and CUDA fields are never taken for a plugin's.
  CHECK(ortc::format::ParseCompatibilityInfo(
            "ortc;format=1.0;cuda=sm_80;cuda_driver=13000;cudnn=9.1.0;cpu=avx2")
            .plugins.empty());
}

TEST_CASE("a plugin backend's binary needs its plugin", "[compat]") {
  const auto c =
      CheckCompatibility("ortc;format=1.0;cpu=generic-le;nosuchnpu=v1;nosuchnpu.sdk=1", Avx2Cpu());
  CHECK(c.answer == Answer::kUnsupported);
  CHECK_THAT(c.reason,
             Catch::Contains("needs backend nosuchnpu") && Catch::Contains("ORTC_BACKEND_PATH"));
}

TEST_CASE("compatibility answers follow the version gate on the CPU", "[compat]") {
  const auto device = Avx2Cpu();
  CHECK(CheckCompatibility("ortc;format=1.0;cpu=generic-le", device).answer == Answer::kOptimal);
  CHECK(CheckCompatibility("ortc;format=1.7;cpu=avx2", device).answer == Answer::kOptimal);
  const auto older = CheckCompatibility("ortc;format=1.0;cpu=sse4.2", device);
  CHECK(older.answer == Answer::kPreferRecompilation);
  CHECK(older.reason.find("avx2") != std::string::npos);
  const auto newer = CheckCompatibility("ortc;format=1.0;cpu=avx512f", device);
  CHECK(newer.answer == Answer::kUnsupported);
  CHECK(newer.reason.find("avx512f") != std::string::npos);
  const auto format = CheckCompatibility("ortc;format=2.0;cpu=generic-le", device);
  CHECK(format.answer == Answer::kUnsupported);
  CHECK(format.reason.find("format 2.0") != std::string::npos);
  CHECK(CheckCompatibility("ortc;cpu=generic-le", device).answer == Answer::kUnsupported);
  DeviceDescription big_endian = device;
  big_endian.little_endian = false;
  CHECK(CheckCompatibility("ortc;format=1.0;cpu=generic-le", big_endian).answer ==
        Answer::kUnsupported);
}

TEST_CASE("compatibility answers follow the version gate for CUDA", "[compat]") {
  const std::string info = "ortc;format=1.0;cuda=sm_90,compute_90;cuda_driver=13000;cpu=generic-le";
  auto no_gpu = Avx2Cpu();
  no_gpu.cuda_unavailable_reason = "no CUDA driver found (libcuda.so.1: not found)";
  const auto refused = CheckCompatibility(info, no_gpu);
  CHECK(refused.answer == Answer::kUnsupported);
  CHECK(refused.reason.find("no CUDA driver found") != std::string::npos);
  auto h100 = Avx2Cpu();
  h100.cuda_driver_version = 13000;
  h100.cuda_archs = {"sm_90"};
  CHECK(CheckCompatibility(info, h100).answer == Answer::kOptimal);
  auto old_driver = h100;
  old_driver.cuda_driver_version = 12040;
  CHECK(CheckCompatibility(info, old_driver).answer == Answer::kUnsupported);
  auto a100 = h100;
  a100.cuda_archs = {"sm_80"};
  CHECK(CheckCompatibility(info, a100).answer == Answer::kUnsupported);
}

TEST_CASE("strings that are not ortc's are not applicable", "[compat]") {
  for (const char* other : {"", "something else", "ortcx;format=1.0", "qnn;format=1.0"})
    CHECK(CheckCompatibility(other, Avx2Cpu()).answer == Answer::kNotApplicable);
}

TEST_CASE("the runtime's API gives the gate's answer on a compatibility string", "[compat]") {
  const auto device = Avx2Cpu();
  const auto optimal = ortc::CheckCompatibilityInfo("ortc;format=1.0;cpu=avx2", &device);
  CHECK(optimal.applicable);
  CHECK(optimal.verdict == ortc::Verdict::kOptimal);
  CHECK(optimal.reason.empty());
  const auto older = ortc::CheckCompatibilityInfo("ortc;format=1.0;cpu=sse4.2", &device);
  CHECK(older.applicable);
  CHECK(older.verdict == ortc::Verdict::kPreferRecompilation);
  CHECK(older.reason.find("avx2") != std::string::npos);
  const auto format = ortc::CheckCompatibilityInfo("ortc;format=2.0;cpu=generic-le", &device);
  CHECK(format.verdict == ortc::Verdict::kUnsupported);
  CHECK(format.reason.find("format 2.0") != std::string::npos);
  const auto foreign = ortc::CheckCompatibilityInfo("trt;sm=90", &device);
  CHECK_FALSE(foreign.applicable);
  CHECK(foreign.reason.empty());
  // Without a device it asks this machine: every little-endian CPU runs the portable target,
  // and no runtime reads a format 9.
  CHECK(ortc::CheckCompatibilityInfo("ortc;format=1.0;cpu=generic-le").verdict ==
        ortc::Verdict::kOptimal);
  CHECK(ortc::CheckCompatibilityInfo("ortc;format=9.0;cpu=generic-le").verdict ==
        ortc::Verdict::kUnsupported);
}
