// `ortc partition` end to end: the real binary on generated models, JSON compared with
// hand-written golden files (test/golden/partition), plus exit codes for bad input.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <fstream>

#include "model_builder.h"
#include "run_ortc.h"

using ortc::test::Attr;
using ortc::test::ModelBuilder;
using ortc::test::RunOrtc;
using ortc::test::TempDir;

namespace {

nlohmann::json Golden(const std::string& name) {
  std::ifstream in(std::string(ORTC_GOLDEN_DIR) + "/partition/" + name);
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

// Drops fields that depend on where the test runs or on wording outside partitioning.
nlohmann::json Comparable(nlohmann::json j) {
  j.erase("model");
  for (auto& b : j["backends"]) b.erase("detail");
  return j;
}

// x -> Conv -> Relu -> Hardmax -> Add(h, r) -> Sigmoid: CUDA refuses Hardmax, and the Add
// cannot join the Conv's group because the path through Hardmax would close a cycle.
ModelBuilder MixedModel() {
  ModelBuilder b(17, 8);
  b.Input("x", {1, 3, 8, 8});
  b.Initializer("W", {4, 3, 3, 3}, std::vector<float>(108, 0.5f))
      .Initializer("B", {4}, {0, 1, 2, 3});
  b.Node("Conv", {"x", "W", "B"}, {"c"}, {Attr("pads", std::vector<int64_t>{1, 1, 1, 1})}, "conv");
  b.Node("Relu", {"c"}, {"r"}, {}, "relu").Node("Hardmax", {"r"}, {"h"}, {}, "hardmax");
  b.Node("Add", {"h", "r"}, {"a"}, {}, "add").Node("Sigmoid", {"a"}, {"y"}, {}, "sigmoid");
  b.Output("y");
  return b;
}

ModelBuilder DiamondModel() {
  ModelBuilder b(17, 8);
  b.Input("x", {2, 3});
  b.Node("Relu", {"x"}, {"a"}, {}, "relu").Node("Sigmoid", {"a"}, {"b"}, {}, "sig");
  b.Node("Tanh", {"a"}, {"c"}, {}, "tanh").Node("Add", {"b", "c"}, {"y"}, {}, "add");
  b.Output("y");
  return b;
}

ModelBuilder ShapeChainModel() {
  ModelBuilder b(17, 8);
  b.Input("x", {-1, 4});
  b.Node("Shape", {"x"}, {"s"}, {}, "shape").Node("Reshape", {"x", "s"}, {"y"}, {}, "reshape");
  b.Output("y");
  return b;
}

}  // namespace

TEST_CASE("ortc partition --json matches the golden files", "[cli][golden]") {
  TempDir dir;
  struct Case {
    ModelBuilder model;
    std::string eps, golden;
  };
  std::vector<Case> cases = {{MixedModel(), "cuda,cpu", "mixed_cuda_cpu.json"},
                             {MixedModel(), "cpu", "mixed_cpu.json"},
                             {DiamondModel(), "cuda", "diamond_cuda.json"},
                             {ShapeChainModel(), "cuda,cpu", "shape_chain_cuda_cpu.json"}};
  for (auto& c : cases) {
    INFO(c.golden);
    c.model.Save(dir / "model.onnx");
    auto r = RunOrtc("partition " + (dir / "model.onnx").string() + " --ep " + c.eps + " --json");
    REQUIRE(r.exit_code == 0);
    auto actual = Comparable(nlohmann::json::parse(r.out));
    auto expected = Golden(c.golden);
    INFO("actual: " << actual.dump(2));
    CHECK(actual == expected);
  }
}

TEST_CASE("ortc partition prints a readable text report", "[cli]") {
  TempDir dir;
  MixedModel().Save(dir / "mixed.onnx");
  auto r = RunOrtc("partition " + (dir / "mixed.onnx").string() + " --ep cuda,cpu");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("cuda_0: 2 node(s)") && Catch::Contains("cpu_0: 1 node(s)") &&
                        Catch::Contains("cuda_1: 2 node(s)") &&
                        Catch::Contains("cuda: op Hardmax is not supported (1 node(s): hardmax)"));
}

// x [N, 4] -> 10 Relus; a NonZero of a static y feeds a Transpose.
ModelBuilder DynamicModel() {
  ModelBuilder b(17, 8);
  b.Input("x", {-1, 4}).Input("y", {6});
  std::string last = "x";
  for (int i = 0; i < 10; ++i) {
    const std::string out = "r" + std::to_string(i);
    b.Node("Relu", {last}, {out}, {}, "relu" + std::to_string(i));
    last = out;
  }
  b.Node("NonZero", {"y"}, {"nz"}, {}, "nz").Node("Transpose", {"nz"}, {"t"}, {}, "tr");
  b.Output(last).Output("t", onnx::TensorProto::INT64);
  return b;
}

TEST_CASE("ortc partition names each dynamic value and its root cause", "[cli]") {
  TempDir dir;
  DynamicModel().Save(dir / "dyn.onnx");
  const std::string model = (dir / "dyn.onnx").string();

  SECTION("text: root causes first, with counts and a few examples") {
    auto r = RunOrtc("partition " + model + " --ep cuda,cpu");
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out,
               Catch::Contains("dynamic shapes: 13 value(s) not static after --input-shape and "
                               "shape folding, from 2 root cause(s):\n"
                               "  dim 'N' of graph input 'x' (fix: --input-shape x=<N>x4)\n"
                               "    11 value(s): x [N,4], r0 [N,4], r1 [N,4], ...\n"
                               "  output of NonZero node 'nz': data-dependent output size "
                               "(NonZero)\n"
                               "    2 value(s): nz [1,?], t [?,1]\n"));
  }
  SECTION("JSON: every value, its shape and reason, and the roots with counts") {
    auto r = RunOrtc("partition " + model + " --ep cuda,cpu --json");
    REQUIRE(r.exit_code == 0);
    auto j = nlohmann::json::parse(r.out);
    REQUIRE(j["dynamic_values"].size() == 13);
    CHECK(j["dynamic_values"][0] ==
          nlohmann::json({{"name", "x"},
                          {"dtype", "float"},
                          {"shape", {"N", 4}},
                          {"reason", "dim 'N' of graph input 'x' (fix: --input-shape x=<N>x4)"},
                          {"roots", {0}}}));
    CHECK(j["dynamic_values"][12]["name"] == "t");
    CHECK(j["dynamic_values"][12]["roots"] == nlohmann::json({1}));
    REQUIRE(j["dynamic_roots"].size() == 2);
    CHECK(j["dynamic_roots"][0] == nlohmann::json({{"kind", "graph_input"},
                                                   {"name", "x"},
                                                   {"reason", "dim 'N' of graph input 'x'"},
                                                   {"fix", "--input-shape x=<N>x4"},
                                                   {"value_count", 11}}));
    CHECK(j["dynamic_roots"][1] ==
          nlohmann::json({{"kind", "node"},
                          {"name", "nz"},
                          {"op", "NonZero"},
                          {"reason",
                           "output of NonZero node 'nz': data-dependent output size "
                           "(NonZero)"},
                          {"value_count", 2}}));
  }
  SECTION("--input-shape leaves only the data-dependent root") {
    auto r = RunOrtc("partition " + model + " --ep cuda,cpu --input-shape x=2x4 --json");
    REQUIRE(r.exit_code == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["dynamic_values"].size() == 2);
    REQUIRE(j["dynamic_roots"].size() == 1);
    CHECK(j["dynamic_roots"][0]["name"] == "nz");
  }
}

TEST_CASE("ortc partition exit codes and JSON errors", "[cli]") {
  TempDir dir;
  MixedModel().Save(dir / "mixed.onnx");
  const std::string model = (dir / "mixed.onnx").string();

  SECTION("too many partitions") {
    auto r = RunOrtc("partition " + model + " --ep cuda,cpu --max-partitions 1 --json");
    CHECK(r.exit_code == 4);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["ok"] == false);
    CHECK(j["error"]["code"] == "NOT_IMPLEMENTED");
    CHECK_THAT(j["error"]["message"].get<std::string>(),
               Catch::Contains("cuda would get 2 partitions"));
    CHECK(j["groups"].size() == 3);  // the report is still there to see why
  }
  SECTION("unknown backend") {
    auto r = RunOrtc("partition " + model + " --ep tpu --json");
    CHECK(r.exit_code == 2);
    CHECK_THAT(nlohmann::json::parse(r.out)["error"]["message"].get<std::string>(),
               Catch::Contains("unknown backend 'tpu'"));
  }
  SECTION("missing model") {
    auto r = RunOrtc("partition " + (dir / "absent.onnx").string() + " --json");
    CHECK(r.exit_code == 5);
    CHECK(nlohmann::json::parse(r.out)["error"]["code"] == "NO_SUCHFILE");
  }
  SECTION("not a model") {
    ortc::test::WriteFile(dir / "junk.onnx", "junk");
    auto r = RunOrtc("partition " + (dir / "junk.onnx").string() + " --json");
    CHECK(r.exit_code == 3);
    CHECK(nlohmann::json::parse(r.out)["error"]["code"] == "INVALID_GRAPH");
  }
  SECTION("no model argument") {
    CHECK(RunOrtc("partition").exit_code == 2);
  }
  SECTION("help lists examples and what each backend really does") {
    auto r = RunOrtc("partition --help");
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("Examples:") &&
                          Catch::Contains("cuda: compiles static-shape graphs"));
  }
}

TEST_CASE("verbose logging: -v shows loading and partitioning decisions, -vv every refusal",
          "[cli]") {
  TempDir dir;
  MixedModel().Save(dir / "mixed.onnx");
  const std::string base = "partition " + (dir / "mixed.onnx").string() + " --ep cuda,cpu";
  auto quiet = RunOrtc(base + " --json", true);
  REQUIRE(quiet.exit_code == 0);
  CHECK_THAT(quiet.out, !Catch::Contains("[info]"));
  auto v = RunOrtc(base + " -v", true);
  CHECK_THAT(v.out, Catch::Contains("[info] loaded ") &&
                        Catch::Contains("[info] partition: group 0 on cuda") &&
                        !Catch::Contains("refuses node"));
  auto vv = RunOrtc("-vv " + base, true);
  CHECK_THAT(vv.out, Catch::Contains("[debug] partition: cuda refuses node 'hardmax' (Hardmax)"));
  // The logs go to stderr: --json keeps stdout one JSON object.
  auto json = RunOrtc(base + " -vv --json");
  CHECK(nlohmann::json::parse(json.out)["ok"] == true);
}
