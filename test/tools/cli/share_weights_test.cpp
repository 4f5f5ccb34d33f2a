// Weight-sharing groups: N models -> N ctx models + one binary, identical weights stored once
// whatever their names, and runtime sessions of the group sharing one mapping.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "format/context_binary_reader.h"
#include "loader/binary_cache.h"
#include "model_builder.h"
#include "ortc/runtime.h"
#include "run_ortc.h"
#include "test_data.h"

using namespace ortc;
using ortc::test::FilesIn;
using ortc::test::ModelBuilder;
using ortc::test::RandomFloats;
using ortc::test::RandomTensor;
using ortc::test::RunOrtc;
using ortc::test::TempDir;
namespace fs = std::filesystem;

namespace {

// y = MatMul(MatMul(x, W_a), W_b): weight names and which weights each model has vary.
void MatMulModel(const fs::path& path, const std::string& na, unsigned sa, const std::string& nb,
                 unsigned sb) {
  ModelBuilder m;
  m.Input("x", {2, 64})
      .Initializer(na, {64, 64}, RandomFloats(sa, 4096))
      .Initializer(nb, {64, 64}, RandomFloats(sb, 4096));
  m.Node("MatMul", {"x", na}, {"h"}).Node("MatMul", {"h", nb}, {"y"}).Output("y");
  m.Save(path);
}

}  // namespace

TEST_CASE("a group of three models gives N+1 files and stores shared weights once", "[share]") {
  TempDir dir;
  // a: {A, B}; b: {A under another name, C}; c: {B under another name, A}.
  MatMulModel(dir / "a.onnx", "A", 1, "B", 2);
  MatMulModel(dir / "b.onnx", "encoder.weight", 1, "C", 3);
  MatMulModel(dir / "c.onnx", "other_b", 2, "other_a", 1);
  fs::create_directories(dir / "out");
  auto r = RunOrtc("compile " + (dir / "a.onnx").string() + " " + (dir / "b.onnx").string() + " " +
                   (dir / "c.onnx").string() + " --share-weights -o " + (dir / "out").string() +
                   " --json");
  REQUIRE(r.exit_code == 0);
  CHECK(FilesIn(dir / "out") ==
        std::vector<std::string>{"a_cpu.bin", "a_ctx.onnx", "b_ctx.onnx", "c_ctx.onnx"});
  auto j = nlohmann::json::parse(r.out);
  const int64_t one = 64 * 64 * 4;
  CHECK(j["weights"]["bytes"] == 6 * one);
  CHECK(j["weights"]["unique_bytes"] == 3 * one);  // A, B, C
  CHECK(j["weights"]["saved_bytes"] == 3 * one);
  REQUIRE(j["models"].size() == 3);
  CHECK(j["models"][0]["weights"]["new_unique_bytes"] == 2 * one);
  CHECK(j["models"][1]["weights"]["new_unique_bytes"] == one);  // only C is new
  CHECK(j["models"][2]["weights"]["new_unique_bytes"] == 0);

  auto bin = format::ContextBinary::OpenFile(dir / "out" / "a_cpu.bin");
  REQUIRE(bin.ok());
  CHECK((*bin)->manifest().weights()->size() == 3);
  for (const char* g : {"a_cpu_0", "b_cpu_0", "c_cpu_0"}) CHECK((*bin)->FindGraph(g));
  // The binary is the unique bytes plus bounded overhead (header page, programs, manifest).
  const auto size = static_cast<int64_t>(fs::file_size(dir / "out" / "a_cpu.bin"));
  CHECK(size >= 3 * one);
  CHECK(size - 3 * one < 16 * 1024);
}

TEST_CASE("sessions of a group share one mapping and may be destroyed in any order",
          "[share][runtime]") {
  TempDir dir;
  MatMulModel(dir / "p.onnx", "W1", 11, "W2", 12);
  MatMulModel(dir / "q.onnx", "renamed", 12, "W1_again", 11);  // same weights, swapped order
  REQUIRE(RunOrtc("compile " + (dir / "p.onnx").string() + " " + (dir / "q.onnx").string() +
                  " --share-weights -q")
              .exit_code == 0);
  auto src_p = Session::Create(dir / "p.onnx");
  auto src_q = Session::Create(dir / "q.onnx");
  REQUIRE((src_p.ok() && src_q.ok()));
  const int before = loader::BinaryOpenCount();
  auto p = Session::Create(dir / "p_ctx.onnx");
  REQUIRE(p.ok());
  auto q = Session::Create(dir / "q_ctx.onnx");
  REQUIRE(q.ok());
  CHECK(loader::BinaryOpenCount() == before + 1);  // the second session did not map or verify again
  const Tensor x = RandomTensor({2, 64}, 5);
  auto want_q = (*src_q)->Run({{"x", x}});
  p->reset();  // the first session goes first; the second still runs from the shared mapping
  auto got_q = (*q)->Run({{"x", x}});
  REQUIRE((got_q.ok() && want_q.ok()));
  for (int i = 0; i < 128; ++i)
    CHECK((*got_q)[0].data<float>()[i] == Approx((*want_q)[0].data<float>()[i]).epsilon(1e-5));
  q->reset();
  auto again = Session::Create(dir / "q_ctx.onnx");  // last user gone: mapped afresh
  REQUIRE(again.ok());
  CHECK(loader::BinaryOpenCount() == before + 2);
}

TEST_CASE("group options are checked", "[share]") {
  TempDir dir;
  MatMulModel(dir / "a.onnx", "A", 1, "B", 2);
  fs::create_directories(dir / "x");
  MatMulModel(dir / "x" / "a.onnx", "A", 1, "B", 2);
  const std::string a = (dir / "a.onnx").string();
  auto same =
      RunOrtc("compile " + a + " " + (dir / "x" / "a.onnx").string() + " --share-weights --json");
  CHECK(same.exit_code == 2);
  CHECK_THAT(same.out, Catch::Contains("named a"));
  auto prefixes =
      RunOrtc("compile " + a + " " + a + " --share-weights --node-name-prefix p_ --json");
  CHECK(prefixes.exit_code == 2);
  REQUIRE(RunOrtc("compile " + a + " -q").exit_code == 0);
  auto into = RunOrtc("compile " + a + " --into " + (dir / "a_cpu.bin").string(), true);
  CHECK(into.exit_code == 2);
  CHECK_THAT(into.out, Catch::Contains("--share-weights") && Catch::Contains("content id"));
}

TEST_CASE("weights packed for different ops that end up as the same bytes are stored once",
          "[share]") {
  // Model g: Gemm(x, W, transB=1) stores W pre-transposed; model m: MatMul(x, W^T) stores W^T.
  TempDir dir;
  const auto w = RandomFloats(21, 64 * 32);  // W is 32 x 64 (N x K)
  std::vector<float> wt(64 * 32);
  for (int n = 0; n < 32; ++n)
    for (int k = 0; k < 64; ++k) wt[k * 32 + n] = w[n * 64 + k];
  ModelBuilder g;
  g.Input("x", {2, 64}).Initializer("W", {32, 64}, w);
  g.Node("Gemm", {"x", "W"}, {"y"}, {ortc::test::Attr("transB", int64_t{1})}).Output("y");
  g.Save(dir / "g.onnx");
  ModelBuilder m;
  m.Input("x", {2, 64}).Initializer("Wt", {64, 32}, wt);
  m.Node("MatMul", {"x", "Wt"}, {"y"}).Output("y");
  m.Save(dir / "m.onnx");
  auto r = RunOrtc("compile " + (dir / "g.onnx").string() + " " + (dir / "m.onnx").string() +
                   " --share-weights --json");
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["weights"]["count"] == 2);
  CHECK(j["weights"]["unique_count"] == 1);
  CHECK(j["models"][1]["weights"]["new_unique_bytes"] == 0);
}

TEST_CASE("a session can keep a private mapping", "[share][runtime]") {
  TempDir dir;
  MatMulModel(dir / "p.onnx", "W1", 11, "W2", 12);
  REQUIRE(RunOrtc("compile " + (dir / "p.onnx").string() + " -q").exit_code == 0);
  auto shared = Session::Create(dir / "p_ctx.onnx");
  REQUIRE(shared.ok());
  const int before = loader::BinaryOpenCount();
  SessionOptions o;
  o.share_ep_contexts = false;
  auto own = Session::Create(dir / "p_ctx.onnx", o);
  REQUIRE(own.ok());
  CHECK(loader::BinaryOpenCount() == before);  // not through the shared cache
  auto a = (*shared)->Run({{"x", RandomTensor({2, 64}, 1)}});
  auto b = (*own)->Run({{"x", RandomTensor({2, 64}, 1)}});
  REQUIRE((a.ok() && b.ok()));
  CHECK(std::memcmp((*a)[0].raw(), (*b)[0].raw(), (*a)[0].byte_size()) == 0);
}

TEST_CASE("in a group each --input-shape fixes the models that have that input", "[share]") {
  TempDir dir;
  // Two models with different input names and a symbolic batch, sharing one weight.
  for (const std::string input : {"a", "b"}) {
    ModelBuilder m;
    m.Input(input, {-1, 64}).Initializer("W", {64, 64}, RandomFloats(7, 4096));
    m.Node("MatMul", {input, "W"}, {"y"}).Output("y");
    m.Save(dir / (input + ".onnx"));
  }
  fs::create_directories(dir / "out");
  const std::string models = (dir / "a.onnx").string() + " " + (dir / "b.onnx").string();
  auto r = RunOrtc("compile " + models + " --share-weights -o " + (dir / "out").string() +
                   " --input-shape a=2x64 --input-shape b=3x64 -q");
  REQUIRE(r.exit_code == 0);
  // Each ctx model declares the shape given for its own input.
  auto input_dims = [&](const std::string& ctx) {
    onnx::ModelProto p;
    std::ifstream in(dir / "out" / ctx, std::ios::binary);
    REQUIRE(p.ParseFromIstream(&in));
    std::vector<int64_t> dims;
    for (const auto& d : p.graph().input(0).type().tensor_type().shape().dim())
      dims.push_back(d.dim_value());
    return dims;
  };
  CHECK(input_dims("a_ctx.onnx") == std::vector<int64_t>{2, 64});
  CHECK(input_dims("b_ctx.onnx") == std::vector<int64_t>{3, 64});
  // A name no model of the group has is a typo: refused, nothing written.
  fs::remove_all(dir / "out");
  fs::create_directories(dir / "out");
  r = RunOrtc("compile " + models + " --share-weights -o " + (dir / "out").string() +
                  " --input-shape a=2x64 --input-shape c=1x64",
              true);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Catch::Contains("--input-shape names 'c', which no model of the group has"));
  CHECK(FilesIn(dir / "out").empty());
}

TEST_CASE("shape profiles compile one model at several shapes as one group", "[share]") {
  TempDir dir;
  ModelBuilder m;  // a dynamic batch, fixed per profile
  m.Input("x", {-1, 64}).Initializer("W", {64, 64}, RandomFloats(7, 4096));
  m.Node("MatMul", {"x", "W"}, {"y"}).Output("y");
  m.Save(dir / "llm.onnx");
  const std::string model = (dir / "llm.onnx").string();
  fs::create_directories(dir / "out");
  auto r = RunOrtc("compile " + model +
                   " --shape-profile prefill:x=8x64 --shape-profile decode:x=1x64 -o " +
                   (dir / "out").string() + " --json");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(FilesIn(dir / "out") ==
        std::vector<std::string>{"llm_cpu.bin", "llm_decode_ctx.onnx", "llm_prefill_ctx.onnx"});
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["weights"]["unique_bytes"] == 64 * 64 * 4);  // W once for both profiles
  CHECK(j["models"][1]["weights"]["new_unique_bytes"] == 0);
  // Each ctx model runs at its own shape, from the one binary.
  for (const auto& [name, rows] : {std::pair<std::string, int64_t>{"prefill", 8}, {"decode", 1}}) {
    auto s = Session::Create(dir / "out" / ("llm_" + name + "_ctx.onnx"));
    REQUIRE(s.ok());
    CHECK((*s)->inputs()[0].shape == std::vector<int64_t>{rows, 64});
    auto out = (*s)->Run({{"x", RandomTensor({rows, 64}, 3)}});
    REQUIRE(out.ok());
    CHECK((*out)[0].shape() == std::vector<int64_t>{rows, 64});
  }

  auto one = RunOrtc("compile " + model + " --shape-profile prefill:x=8x64 --json");
  CHECK(one.exit_code == 2);
  CHECK_THAT(one.out, Catch::Contains("at least two --shape-profile"));
  auto unknown = RunOrtc("compile " + model +
                         " --shape-profile a:nosuch=1x64 --shape-profile b:x=1x64 --json");
  CHECK(unknown.exit_code == 2);
  CHECK_THAT(unknown.out, Catch::Contains("'nosuch', which the model has no input of"));
  auto twice =
      RunOrtc("compile " + model + " --shape-profile a:x=2x64 --shape-profile a:x=1x64 --json");
  CHECK(twice.exit_code == 2);
  CHECK_THAT(twice.out, Catch::Contains("given twice"));
  auto bad = RunOrtc("compile " + model + " --shape-profile 'a b:x=2x64' --json");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.out, Catch::Contains("must be NAME:input=dims"));
  auto models = RunOrtc("compile " + model + " " + model +
                        " --shape-profile a:x=2x64 --shape-profile b:x=1x64 --json");
  CHECK(models.exit_code == 2);
  CHECK_THAT(models.out, Catch::Contains("needs --share-weights"));
}

TEST_CASE("in a group, a shape profile named after a model gives that model its shapes",
          "[share]") {
  TempDir dir;
  // An LLM's prefill and decode graphs: inputs of the same name at different shapes.
  for (const char* name : {"prefill", "decode"}) {
    ModelBuilder m;
    m.Input("x", {-1, 64}).Initializer("W", {64, 64}, RandomFloats(7, 4096));
    m.Node("MatMul", {"x", "W"}, {"y"}).Output("y");
    m.Save(dir / (std::string(name) + ".onnx"));
  }
  const std::string models =
      (dir / "prefill.onnx").string() + " " + (dir / "decode.onnx").string() + " --share-weights";
  fs::create_directories(dir / "out");
  auto r = RunOrtc("compile " + models +
                   " --shape-profile prefill:x=8x64 --shape-profile decode:x=1x64 -o " +
                   (dir / "out").string() + " --json");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(FilesIn(dir / "out") ==
        std::vector<std::string>{"decode_ctx.onnx", "prefill_cpu.bin", "prefill_ctx.onnx"});
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["weights"]["unique_bytes"] == 64 * 64 * 4);
  for (const auto& [name, rows] : {std::pair<std::string, int64_t>{"prefill", 8}, {"decode", 1}}) {
    auto s = Session::Create(dir / "out" / (name + "_ctx.onnx"));
    REQUIRE(s.ok());
    CHECK((*s)->inputs()[0].shape == std::vector<int64_t>{rows, 64});
    // The output the source left at [?, 64] is declared at the shape the profile gives it.
    CHECK((*s)->outputs()[0].shape == std::vector<int64_t>{rows, 64});
  }

  auto stranger = RunOrtc(
      "compile " + models + " --shape-profile prefill:x=8x64 --shape-profile other:x=1x64", true);
  CHECK(stranger.exit_code == 2);
  CHECK_THAT(stranger.out, Catch::Contains("names a model of the group by its file name"));
  CHECK_THAT(stranger.out, Catch::Contains("decode, prefill"));
  auto unknown = RunOrtc("compile " + models + " --shape-profile decode:nosuch=1x64", true);
  CHECK(unknown.exit_code == 2);
  CHECK_THAT(unknown.out, Catch::Contains("'nosuch', which the model has no input of"));
  auto twice = RunOrtc(
      "compile " + models + " --shape-profile decode:x=2x64 --shape-profile decode:x=1x64", true);
  CHECK(twice.exit_code == 2);
  CHECK_THAT(twice.out, Catch::Contains("given twice"));
  CHECK(FilesIn(dir / "out").size() == 3);  // the refused compiles wrote nothing
}
