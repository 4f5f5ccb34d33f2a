// `ortc tune` end to end against the stand-in CUDA libraries, whose work has a simulated cost
// (ORTC_STANDIN_WORK_US): the tune times every candidate of the model's grouped convolutions
// through the runtime's step profile, keeps the cheaper one per key, and a compile with the cache
// takes it (source "measured"); with the costs reversed the rules' choice is confirmed. Without a
// GPU, tune refuses with a reason rather than guessing.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <fstream>

#include "model_builder.h"
#include "run_ortc.h"
#include "standin_fixture.h"
#include "test_data.h"

namespace ortc::test {
namespace {

namespace fs = std::filesystem;

// x [1, 8, 12, 12] -> 1x1 conv + Relu -> two depthwise 3x3 convolutions of one shape (+ bias,
// Relu): the dense one stays cuDNN's; both depthwise ones are one tuning key.
ModelBuilder DepthwiseModel() {
  ModelBuilder b(13, 8);
  b.Input("x", {1, 8, 12, 12});
  b.Initializer("Wp", {8, 8, 1, 1}, std::vector<float>(64, 0.1f));
  b.Initializer("Wd1", {8, 1, 3, 3}, std::vector<float>(72, 0.2f));
  b.Initializer("Wd2", {8, 1, 3, 3}, std::vector<float>(72, -0.1f));
  b.Initializer("B", {8}, std::vector<float>(8, 0.5f));
  const auto pads = Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  b.Node("Conv", {"x", "Wp"}, {"p"}, {}, "pointwise");
  b.Node("Relu", {"p"}, {"pr"}, {}, "pointwise_relu");
  b.Node("Conv", {"pr", "Wd1", "B"}, {"d1"}, {pads, Attr("group", int64_t{8})}, "depthwise1");
  b.Node("Relu", {"d1"}, {"r1"}, {}, "relu1");
  b.Node("Conv", {"r1", "Wd2", "B"}, {"d2"}, {pads, Attr("group", int64_t{8})}, "depthwise2");
  b.Node("Relu", {"d2"}, {"y"}, {}, "relu2");
  b.Output("y");
  return b;
}

RunResult Tune(const fs::path& model, const fs::path& cache, const std::string& costs) {
  return RunOrtcWith("env ORTC_BACKEND_PATH=" ORTC_CUDA_PLUGIN_DIR " ORTC_STANDIN_WORK_US=" + costs,
                     "tune '" + model.string() + "' -o '" + cache.string() +
                         "' --precision fp16 --runs 5 --warmup 1 --json",
                     true);
}

nlohmann::json JsonOf(const RunResult& r) {
  const size_t brace = r.out.find('{');
  REQUIRE(brace != std::string::npos);
  return nlohmann::json::parse(r.out.substr(brace));
}

}  // namespace

TEST_CASE("stand-in: ortc tune measures grouped convolutions and the compile takes its choice") {
  REQUIRE(Probe().ok());
  TempDir dir;
  const fs::path model = dir / "dw.onnx";
  DepthwiseModel().Save(model);

  // Kernel launches cost 40 us, cuDNN calls 5: cuDNN wins, against the rules' generated kernel.
  const fs::path slow_kernels = dir / "slow_kernels.json";
  auto r = Tune(model, slow_kernels, "cuLaunchKernel=40,cudnn=5");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  auto j = JsonOf(r);
  CHECK(j["device"]["arch"] == "sm_90");
  REQUIRE(j["choices"].size() == 1);  // one key: the two depthwise convolutions are alike
  const auto& c = j["choices"][0];
  CHECK(c["rule_choice"] == "generated");
  CHECK(c["choice"] == "library");
  CHECK(c["steps"].size() == 2);
  CHECK(c["median_ms"]["generated"].get<double>() >= 0.040);
  CHECK(c["median_ms"]["library"].get<double>() < 0.040);
  CHECK(j["changed"] == 1);
  auto cache = nlohmann::json::parse(ReadFile(slow_kernels.string()));
  CHECK(cache["format"] == "ortc-tuning-cache");
  REQUIRE(cache["entries"].size() == 1);
  CHECK(cache["entries"][0]["choice"] == "library");

  // The compile with that cache (no GPU needed) runs both depthwise convolutions on cuDNN and
  // says the choice was measured.
  auto compiled = RunOrtcWith(
      "env -u LD_LIBRARY_PATH",
      "compile '" + model.string() +
          "' --ep cuda,cpu --precision fp16 --target-arch sm_90 --json -o '" +
          (dir / "tuned").string() + "/' --tuning-cache '" + slow_kernels.string() + "'",
      false);
  REQUIRE(compiled.exit_code == 0);
  auto report = nlohmann::json::parse(compiled.out);
  REQUIRE(report["choices"].size() == 2);
  for (const auto& choice : report["choices"]) {
    CHECK(choice["source"] == "measured");
    CHECK(choice["choice"] == "library");
  }
  CHECK(report["lowering"]["conv_calls"] == 3);
  CHECK(report["lowering"].count("generated_convs") == 0);

  // The same cache read by a compile for another architecture: said and ignored, the rules
  // decide.
  cache["device"]["arch"] = "sm_80";
  const fs::path foreign = dir / "foreign.json";
  std::ofstream(foreign) << cache.dump();
  auto ignored =
      RunOrtcWith("env -u LD_LIBRARY_PATH",
                  "compile '" + model.string() +
                      "' --ep cuda,cpu --precision fp16 --target-arch sm_90 --json -o '" +
                      (dir / "foreign").string() + "/' --tuning-cache '" + foreign.string() + "'",
                  false);
  REQUIRE(ignored.exit_code == 0);
  auto ignored_report = nlohmann::json::parse(ignored.out);
  REQUIRE(ignored_report["warnings"].size() == 1);
  CHECK_THAT(ignored_report["warnings"][0].get<std::string>(),
             Catch::Contains("measured on sm_80, this compile targets sm_90"));
  for (const auto& choice : ignored_report["choices"]) CHECK(choice["source"] == "rule");
  CHECK(ignored_report["lowering"]["generated_convs"] == 2);

  // Kernels cheap, cuDNN dear: the rules' generated kernel is confirmed, nothing changes.
  const fs::path slow_library = dir / "slow_library.json";
  r = Tune(model, slow_library, "cuLaunchKernel=2,cudnn=50");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  j = JsonOf(r);
  REQUIRE(j["choices"].size() == 1);
  CHECK(j["choices"][0]["choice"] == "generated");
  CHECK(j["changed"] == 0);
}

TEST_CASE("stand-in: ortc tune without a GPU refuses with the reason and writes nothing") {
  TempDir dir;
  const fs::path model = dir / "dw.onnx";
  DepthwiseModel().Save(model);
  // No stand-in driver on the library path: no CUDA device at all.
  auto r =
      RunOrtcWith("env -u LD_LIBRARY_PATH ORTC_BACKEND_PATH=" ORTC_CUDA_PLUGIN_DIR,
                  "tune '" + model.string() + "' -o '" + (dir / "c.json").string() + "'", true);
  INFO(r.out);
  CHECK(r.exit_code == 7);
  CHECK_THAT(r.out, Catch::Contains("finds none here"));
  CHECK_FALSE(fs::exists(dir / "c.json"));
}

}  // namespace ortc::test
