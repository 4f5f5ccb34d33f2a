// Tuning caches on the compile side: the file format read back as written, malformed files
// refused with the file named, which caches fit a CUDA compile (and the reason when not), and a
// fitting cache deciding a grouped convolution's implementation with the choice recorded as
// measured.
#include <catch2/catch.hpp>

#include <fstream>

#include "cuda/compile/identity.h"
#include "cuda/compile/lowering_grouped_conv.h"
#include "cuda/compile/program_writer.h"
#include "cuda/compile/tuning_choices.h"
#include "plan_helpers.h"
#include "test_data.h"
#include "tuning_cache.h"

using namespace ortc::backends;
using namespace ortc::backends::cuda;
using ortc::test::Attr;
using ortc::test::ModelBuilder;
using ortc::test::TempDir;

namespace {

std::string CompileCudnn() {
  for (const auto& [k, v] : LibraryVersions(true, false))
    if (k == "cudnn") return v;
  return "";
}

TuningCache FittingCache(const std::string& key, const std::string& choice) {
  TuningCache c;
  c.backend = "cuda";
  c.device = {{"arch", "sm_90"}, {"cudnn", CompileCudnn()}, {"driver", "13000"}};
  c.made_by = "test";
  c.entries.push_back({key, choice, {{"generated", 9.0}, {"library", 4.0}}, 5});
  return c;
}

std::filesystem::path Write(const TempDir& dir, const std::string& name, const std::string& text) {
  const auto p = dir / name;
  std::ofstream(p) << text;
  return p;
}

ModelBuilder Depthwise() {
  ModelBuilder b(13, 8);
  b.Input("x", {1, 8, 6, 6});
  b.Initializer("W", {8, 1, 3, 3}, std::vector<float>(72, 0.1f));
  b.Node("Conv", {"x", "W"}, {"y"},
         {Attr("pads", std::vector<int64_t>{1, 1, 1, 1}), Attr("group", int64_t{8})}, "dw");
  b.Output("y");
  return b;
}

StepKind KindOf(const ortc::test::cuda::Planned& p, const std::string& step) {
  for (const auto& s : p.graph.plan.steps)
    if (s.name == step) return s.kind;
  FAIL("no step " << step);
  return StepKind::kCopy;
}

CudaOptions Fp16(ortc::Result<CudaOptions> o) {
  REQUIRE(o.ok());
  o->precision = Precision::kFp16;
  return *o;
}

}  // namespace

TEST_CASE("a tuning cache reads back as written", "[tuning]") {
  TempDir dir;
  const TuningCache c = FittingCache("conv k", "library");
  const auto path = Write(dir, "c.json", TuningCacheJson(c));
  auto back = ReadTuningCache(path);
  REQUIRE(back.ok());
  CHECK(back->version == kTuningCacheVersion);
  CHECK(back->backend == "cuda");
  CHECK(back->device == c.device);
  REQUIRE(back->entries.size() == 1);
  CHECK(back->entries[0].key == "conv k");
  CHECK(back->entries[0].choice == "library");
  CHECK(back->entries[0].measured_us.at("library") == 4.0);
  CHECK(back->entries[0].runs == 5);
}

TEST_CASE("malformed tuning caches are errors naming the file", "[tuning]") {
  TempDir dir;
  CHECK(ReadTuningCache(dir / "missing.json").status().code() == ortc::StatusCode::kNoSuchFile);
  for (const char* text : {"not json", "{}", R"({"format": "ortc-tuning-cache"})",
                           R"({"format": "ortc-tuning-cache", "version": 1, "backend": "cuda",
                               "device": {}, "entries": [{"choice": "library"}]})",
                           R"({"format": "ortc-tuning-cache", "version": 1, "backend": "cuda",
                               "device": {"arch": 90}, "entries": []})"}) {
    INFO(text);
    auto r = ReadTuningCache(Write(dir, "bad.json", text));
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Catch::Contains("bad.json"));
    CHECK_THAT(r.status().message(), Catch::Contains("ortc tune"));
  }
  // Another format version is read as such, for the backend to report and ignore.
  auto v2 = ReadTuningCache(
      Write(dir, "v2.json", R"({"format": "ortc-tuning-cache", "version": 2, "whatever": 1})"));
  REQUIRE(v2.ok());
  CHECK(v2->version == 2);
}

TEST_CASE("a tuning cache fits a CUDA compile only for its architecture and cuDNN major",
          "[tuning]") {
  auto o = ParseCudaOptions({{"target_arch", "sm_80,sm_90"}});
  REQUIRE(o.ok());
  TuningCache c = FittingCache("k", "library");
  CHECK(CacheMismatch(c, *o).empty());
  auto sm80 = ParseCudaOptions({{"target_arch", "sm_80"}});
  REQUIRE(sm80.ok());
  const std::string arch = CacheMismatch(c, *sm80);
  CHECK_THAT(arch, Catch::Contains("measured on sm_90"));
  CHECK_THAT(arch, Catch::Contains("targets sm_80"));
  if (!CompileCudnn().empty()) {
    TuningCache old = c;
    old.device["cudnn"] = "8.9.7";
    const std::string why = CacheMismatch(old, *o);
    CHECK_THAT(why, Catch::Contains("cuDNN 8.9.7"));
    CHECK_THAT(why, Catch::Contains(CompileCudnn()));
  }
  TuningCache cpu = c;
  cpu.backend = "cpu";
  CHECK_THAT(CacheMismatch(cpu, *o), Catch::Contains("backend 'cpu'"));
  TuningCache v2;
  v2.version = 2;
  CHECK_THAT(CacheMismatch(v2, *o), Catch::Contains("format version 2"));
}

TEST_CASE("a fitting cache decides a grouped convolution, recorded as measured", "[tuning]") {
  TempDir dir;
  // The key the compile computes for this convolution, from a plan without the cache.
  auto plain = ortc::test::cuda::PlanWith(Depthwise(), Fp16(ParseCudaOptions({})));
  REQUIRE(plain.graph.plan.choices.size() == 1);
  const PlanChoice& rule = plain.graph.plan.choices[0];
  CHECK(rule.source == "rule");
  CHECK(rule.choice == "generated");
  CHECK(rule.step == "dw");
  CHECK(rule.candidates == std::vector<std::string>{"generated", "library"});

  const auto fits = Write(dir, "fits.json", TuningCacheJson(FittingCache(rule.key, "library")));
  auto o = ParseCudaOptions({{"target_arch", "sm_90"}, {"tuning_cache", fits.string()}});
  REQUIRE(o.ok());
  CHECK(o->tuning_cache_ignored.empty());
  CHECK(o->tuned_choices.at(rule.key) == "library");
  auto tuned = ortc::test::cuda::PlanWith(Depthwise(), Fp16(o));
  REQUIRE(tuned.graph.plan.choices.size() == 1);
  CHECK(tuned.graph.plan.choices[0].source == "measured");
  CHECK(tuned.graph.plan.choices[0].choice == "library");
  CHECK(KindOf(tuned, "dw") == StepKind::kConv);
  // The binary's program records the choice and where it came from.
  const std::string bytes = SerializeProgram(tuned.graph.plan);
  const auto* program = ortc::fb::cuda::GetProgram(bytes.data());
  REQUIRE(program->choices() != nullptr);
  REQUIRE(program->choices()->size() == 1);
  CHECK(program->choices()->Get(0)->step()->str() == "dw");
  CHECK(program->choices()->Get(0)->key()->str() == rule.key);
  CHECK(program->choices()->Get(0)->choice()->str() == "library");
  CHECK(program->choices()->Get(0)->source()->str() == "measured");
  CHECK(program->choices()->Get(0)->candidates()->size() == 2);

  // The same cache for sm_80: ignored, with the reason; the rules decide.
  auto other = ParseCudaOptions({{"target_arch", "sm_80"}, {"tuning_cache", fits.string()}});
  REQUIRE(other.ok());
  CHECK_THAT(other->tuning_cache_ignored, Catch::Contains("measured on sm_90"));
  CHECK(other->tuned_choices.empty());
  auto ruled = ortc::test::cuda::PlanWith(Depthwise(), Fp16(other));
  CHECK(ruled.graph.plan.choices[0].source == "rule");
  CHECK(KindOf(ruled, "dw") == StepKind::kLaunch);

  // A forced option wins over the cache.
  auto forced = ParseCudaOptions(
      {{"target_arch", "sm_90"}, {"tuning_cache", fits.string()}, {"grouped_conv", "generated"}});
  REQUIRE(forced.ok());
  auto f = ortc::test::cuda::PlanWith(Depthwise(), Fp16(forced));
  CHECK(f.graph.plan.choices[0].source == "option");
  CHECK(f.graph.plan.choices[0].choice == "generated");

  // A malformed cache or an unknown choice fails the options.
  CHECK_FALSE(ParseCudaOptions({{"tuning_cache", Write(dir, "bad.json", "[]").string()}}).ok());
  const auto odd = Write(dir, "odd.json", TuningCacheJson(FittingCache(rule.key, "fastest")));
  auto odd_options = ParseCudaOptions({{"target_arch", "sm_90"}, {"tuning_cache", odd.string()}});
  REQUIRE_FALSE(odd_options.ok());
  CHECK_THAT(odd_options.status().message(), Catch::Contains("'fastest'"));
}
