// `ortc compile` and `ortc inspect` end to end: file naming, EPContext attributes, embed
// mode, prefixes, dedup, determinism, refusal rules, atomicity and corruption reports.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "format/context_binary_reader.h"
#include "format/ep_context.h"
#include "model_builder.h"
#include "run_ortc.h"
#include "test_data.h"

using namespace ortc;
using ortc::test::Attr;
using ortc::test::FilesIn;
using ortc::test::LoadProto;
using ortc::test::ModelBuilder;
using ortc::test::ReadFile;
using ortc::test::RunOrtc;
using ortc::test::TempDir;
namespace fs = std::filesystem;

namespace {

// Two MatMuls whose weights hold the same bytes under different names, plus a bias.
ModelBuilder RepeatedWeightsModel() {
  ModelBuilder b;
  std::vector<float> w(64);
  for (int i = 0; i < 64; ++i) w[i] = 0.25f * static_cast<float>(i % 7);
  b.Input("x", {2, 8})
      .Initializer("W1", {8, 8}, w)
      .Initializer("W2", {8, 8}, w)
      .Initializer("bias", {8}, std::vector<float>(8, 1.f));
  b.Node("MatMul", {"x", "W1"}, {"h"}, {}, "mm1").Node("Add", {"h", "bias"}, {"a"}, {}, "add");
  b.Node("MatMul", {"a", "W2"}, {"y"}, {}, "mm2").Output("y");
  return b;
}

// Two independent branches: they form two groups, so the binary holds two graphs.
ModelBuilder TwoBranchModel() {
  ModelBuilder b;
  b.Input("x", {4}).Input("z", {4}).Initializer("k", {4}, {1, 2, 3, 4});
  b.Node("Add", {"x", "k"}, {"y1"}, {}, "left").Node("Mul", {"z", "k"}, {"y2"}, {}, "right");
  b.Output("y1").Output("y2");
  return b;
}

std::vector<format::EpContextNode> EpNodes(const onnx::ModelProto& m) {
  std::vector<format::EpContextNode> out;
  for (const auto& n : m.graph().node()) {
    if (format::IsEpContextNode(n)) {
      auto e = format::EpContextNode::FromNodeProto(n);
      REQUIRE(e.ok());
      out.push_back(*e);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("compile writes <model>_ctx.onnx and <model>_cpu.bin with ORT's EPContext attributes",
          "[compile]") {
  TempDir dir;
  RepeatedWeightsModel().Save(dir / "m.onnx");
  auto r = RunOrtc("compile " + (dir / "m.onnx").string() + " --json");
  REQUIRE(r.exit_code == 0);
  CHECK(FilesIn(dir.path()) == std::vector<std::string>{"m.onnx", "m_cpu.bin", "m_ctx.onnx"});

  const auto ctx = LoadProto(dir / "m_ctx.onnx");
  bool has_ms_opset = false;
  for (const auto& op : ctx.opset_import())
    has_ms_opset |= op.domain() == "com.microsoft" && op.version() == 1;
  CHECK(has_ms_opset);
  REQUIRE(ctx.graph().node_size() == 1);
  CHECK(ctx.graph().initializer_size() == 0);  // every weight lives in the binary
  const auto nodes = EpNodes(ctx);
  REQUIRE(nodes.size() == 1);
  const auto& n = nodes[0];
  CHECK(n.name == "m_cpu_0");
  CHECK(n.partition_name == "m_cpu_0");
  CHECK(n.main_context == 1);
  CHECK(n.embed_mode == 0);
  CHECK(n.ep_cache_context == "m_cpu.bin");
  CHECK(n.source == "ortc.cpu");
  CHECK(n.onnx_model_filename == "m.onnx");
  CHECK_FALSE(n.ep_sdk_version.empty());
  CHECK_FALSE(n.hardware_architecture.empty());
  CHECK(n.inputs == std::vector<std::string>{"x"});
  CHECK(n.outputs == std::vector<std::string>{"y"});

  auto bin = format::ContextBinary::OpenFile(dir / "m_cpu.bin");
  REQUIRE(bin.ok());
  CHECK(format::NotesValue(n.notes, "content_id") == (*bin)->content_id());
  CHECK((*bin)->FindGraph("m_cpu_0"));

  // Dedup: W1 and W2 hold the same bytes under different names.
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["ok"] == true);
  CHECK(j["weights"]["count"] == 3);
  CHECK(j["weights"]["unique_count"] == 2);
  CHECK(j["weights"]["bytes"] == 256 + 256 + 32);
  CHECK(j["weights"]["unique_bytes"] == 256 + 32);
  CHECK(j["weights"]["saved_bytes"] == 256);
  CHECK((*bin)->manifest().weights()->size() == 2);
  CHECK(j["files"].size() == 2);
  // Consecutive phases: together they are the total.
  double named = 0;
  for (const char* phase : {"prepare", "hash", "load", "partition", "compile", "emit", "publish"}) {
    REQUIRE(j["phases_ms"].contains(phase));
    named += j["phases_ms"][phase].get<double>();
  }
  CHECK(named == Approx(j["phases_ms"]["total"].get<double>()).margin(0.01));
}

TEST_CASE("two groups share one binary: the first is the main context", "[compile]") {
  TempDir dir;
  TwoBranchModel().Save(dir / "two.onnx");
  REQUIRE(RunOrtc("compile " + (dir / "two.onnx").string() + " -q").exit_code == 0);
  const auto nodes = EpNodes(LoadProto(dir / "two_ctx.onnx"));
  REQUIRE(nodes.size() == 2);
  CHECK(nodes[0].main_context == 1);
  CHECK(nodes[1].main_context == 0);
  CHECK(nodes[0].ep_cache_context == "two_cpu.bin");
  CHECK(nodes[0].partition_name == "two_cpu_0");
  CHECK(nodes[1].partition_name == "two_cpu_1");
  auto bin = format::ContextBinary::OpenFile(dir / "two_cpu.bin");
  REQUIRE(bin.ok());
  CHECK((*bin)->manifest().graphs()->size() == 2);
  CHECK((*bin)->manifest().weights()->size() == 1);  // `k` is read by both graphs, stored once
}

TEST_CASE("output naming follows -o", "[compile]") {
  TempDir dir;
  RepeatedWeightsModel().Save(dir / "m.onnx");
  fs::create_directories(dir / "out");
  const std::string model = (dir / "m.onnx").string();
  SECTION("a folder") {
    REQUIRE(RunOrtc("compile " + model + " -o " + (dir / "out").string() + " -q").exit_code == 0);
    CHECK(FilesIn(dir / "out") == std::vector<std::string>{"m_cpu.bin", "m_ctx.onnx"});
  }
  SECTION("a _ctx.onnx file name") {
    REQUIRE(RunOrtc("compile " + model + " -o " + (dir / "out" / "prod_ctx.onnx").string() + " -q")
                .exit_code == 0);
    CHECK(FilesIn(dir / "out") == std::vector<std::string>{"prod_cpu.bin", "prod_ctx.onnx"});
  }
  SECTION("another file name") {
    REQUIRE(RunOrtc("compile " + model + " -o " + (dir / "out" / "bundle.onnx").string() + " -q")
                .exit_code == 0);
    CHECK(FilesIn(dir / "out") == std::vector<std::string>{"bundle.onnx", "bundle_cpu.bin"});
    CHECK(EpNodes(LoadProto(dir / "out" / "bundle.onnx"))[0].ep_cache_context == "bundle_cpu.bin");
  }
  SECTION("folders that do not exist are made") {
    auto r = RunOrtc("compile " + model + " -o " + (dir / "new" / "deep" / "x.onnx").string() +
                     " --json");
    CHECK(r.exit_code == 0);
    CHECK(FilesIn(dir / "new" / "deep") == std::vector<std::string>{"x.onnx", "x_cpu.bin"});
    REQUIRE(
        RunOrtc("compile " + model + " -o " + (dir / "new2" / "sub").string() + "/ -q").exit_code ==
        0);
    CHECK(FilesIn(dir / "new2" / "sub") == std::vector<std::string>{"m_cpu.bin", "m_ctx.onnx"});
  }
  SECTION("a failed compile leaves no folder it made") {
    // NVRTC missing fails the CUDA compile of a generated kernel (the Sigmoid) after the folder
    // was made for the outputs.
    ModelBuilder k;
    k.Input("x", {2, 8}).Node("Sigmoid", {"x"}, {"y"}).Output("y");
    k.Save(dir / "k.onnx");
    auto r = ortc::test::RunOrtcWith("env ORTC_NVRTC_LIBRARY=" + (dir / "no-libnvrtc.so").string(),
                                     "compile " + (dir / "k.onnx").string() + " --ep cuda,cpu -o " +
                                         (dir / "made" / "deeper").string() + "/ -q",
                                     true);
    INFO(r.out);
    CHECK(r.exit_code == 7);
    CHECK_FALSE(fs::exists(dir / "made"));
  }
  SECTION("a file where a folder must be made") {
    ortc::test::WriteFile(dir / "plain", "x");
    auto r = RunOrtc("compile " + model + " -o " + (dir / "plain" / "sub").string() + "/ --json");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.out, Catch::Contains("is a file"));
  }
}

TEST_CASE("a node name prefix names nodes and graphs", "[compile]") {
  TempDir dir;
  TwoBranchModel().Save(dir / "two.onnx");
  REQUIRE(
      RunOrtc("compile " + (dir / "two.onnx").string() + " --node-name-prefix enc_ -q").exit_code ==
      0);
  const auto nodes = EpNodes(LoadProto(dir / "two_ctx.onnx"));
  REQUIRE(nodes.size() == 2);
  CHECK(nodes[0].name == "enc_cpu_0");
  CHECK(nodes[1].partition_name == "enc_cpu_1");
  CHECK(format::ContextBinary::OpenFile(dir / "two_cpu.bin").value()->FindGraph("enc_cpu_1"));
}

TEST_CASE("embed mode 1 puts the binary inside the ctx model", "[compile]") {
  TempDir dir;
  TwoBranchModel().Save(dir / "two.onnx");
  REQUIRE(RunOrtc("compile " + (dir / "two.onnx").string() + " --embed-mode 1 -q").exit_code == 0);
  CHECK(FilesIn(dir.path()) == std::vector<std::string>{"two.onnx", "two_ctx.onnx"});
  const auto nodes = EpNodes(LoadProto(dir / "two_ctx.onnx"));
  REQUIRE(nodes.size() == 2);
  CHECK(nodes[0].embed_mode == 1);
  CHECK(nodes[1].ep_cache_context.empty());  // only the main context carries the payload
  auto bin = format::ContextBinary::Open(format::MappedFile::FromBytes(nodes[0].ep_cache_context));
  REQUIRE(bin.ok());
  CHECK((*bin)->FindGraph("two_cpu_1"));
  CHECK(RunOrtc("inspect " + (dir / "two_ctx.onnx").string()).exit_code == 0);
}

TEST_CASE("identical input gives byte-identical outputs", "[compile][determinism]") {
  TempDir dir;
  RepeatedWeightsModel().Save(dir / "m.onnx");
  fs::create_directories(dir / "a");
  fs::create_directories(dir / "b");
  REQUIRE(RunOrtc("compile " + (dir / "m.onnx").string() + " -o " + (dir / "a").string() + " -q")
              .exit_code == 0);
  REQUIRE(RunOrtc("compile " + (dir / "m.onnx").string() + " -o " + (dir / "b").string() + " -q")
              .exit_code == 0);
  CHECK(ReadFile((dir / "a" / "m_cpu.bin").string()) ==
        ReadFile((dir / "b" / "m_cpu.bin").string()));
  CHECK(ReadFile((dir / "a" / "m_ctx.onnx").string()) ==
        ReadFile((dir / "b" / "m_ctx.onnx").string()));
}

TEST_CASE("compile refuses what it must, leaving nothing behind", "[compile]") {
  TempDir dir;
  RepeatedWeightsModel().Save(dir / "m.onnx");
  const std::string model = (dir / "m.onnx").string();
  SECTION("outputs exist") {
    REQUIRE(RunOrtc("compile " + model + " -q").exit_code == 0);
    const std::string before = ReadFile((dir / "m_cpu.bin").string());
    auto r = RunOrtc("compile " + model + " --error-if-output-exists --json");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.out, Catch::Contains("exists"));
    CHECK(ReadFile((dir / "m_cpu.bin").string()) == before);
  }
  SECTION("an already compiled model") {
    REQUIRE(RunOrtc("compile " + model + " -q").exit_code == 0);
    auto r = RunOrtc("compile " + (dir / "m_ctx.onnx").string() + " --json");
    CHECK(r.exit_code != 0);
    CHECK_THAT(r.out, Catch::Contains("already contains EPContext nodes"));
  }
  SECTION("no node compiled") {
    ModelBuilder empty;
    empty.Input("x", {2}).Output("x");
    empty.Save(dir / "empty.onnx");
    auto r = RunOrtc("compile " + (dir / "empty.onnx").string() +
                     " --error-if-no-nodes-compiled --json");
    CHECK(r.exit_code == 4);
    CHECK_THAT(r.out, Catch::Contains("no node was compiled"));
    CHECK(FilesIn(dir.path()) == std::vector<std::string>{"empty.onnx", "m.onnx"});
  }
  SECTION("a tensor of a type the runtime holds none of (it would make an unloadable binary)") {
    ModelBuilder f8(19, 9);
    f8.Input("x", {1, 4}).Initializer("s", {1}, {0.5f});
    auto* w = f8.proto().mutable_graph()->add_initializer();
    w->set_name("w");
    w->set_data_type(17);  // float8e4m3fn
    w->add_dims(4);
    w->add_dims(4);
    w->set_raw_data(std::string(16, '\x38'));
    f8.Node("DequantizeLinear", {"w", "s"}, {"wf"}).Node("MatMul", {"x", "wf"}, {"y"}).Output("y");
    f8.Save(dir / "f8.onnx");
    auto r = RunOrtc("compile " + (dir / "f8.onnx").string() + " --json");
    CHECK(r.exit_code == 4);
    CHECK_THAT(r.out, Catch::Contains("value 'w' is float8e4m3fn, a type the CPU runtime holds no "
                                      "tensor of"));
    CHECK(FilesIn(dir.path()) == std::vector<std::string>{"f8.onnx", "m.onnx"});
  }
  SECTION("an accelerator named in --ep that takes nothing is said, or refused when asked") {
    ModelBuilder dyn;  // a dynamic batch: CUDA refuses every node without --input-shape
    dyn.Input("x", {-1, 4}).Node("Relu", {"x"}, {"y"}).Output("y");
    dyn.Save(dir / "dyn.onnx");
    auto warned = RunOrtc("compile " + (dir / "dyn.onnx").string() + " --ep cuda,cpu --json -o " +
                          (dir / "dyn_out").string() + "/");
    REQUIRE(warned.exit_code == 0);
    auto j = nlohmann::json::parse(warned.out);
    REQUIRE(j["warnings"].size() == 1);
    CHECK_THAT(j["warnings"][0].get<std::string>(),
               Catch::Contains("backend cuda compiled no node: dynamic shape"));
    auto refused = RunOrtc("compile " + (dir / "dyn.onnx").string() +
                               " --ep cuda,cpu --error-if-no-nodes-compiled -o " +
                               (dir / "dyn_refused").string() + "/",
                           true);
    CHECK(refused.exit_code == 4);
    CHECK_THAT(refused.out, Catch::Contains("backend cuda compiled no node"));
    CHECK_FALSE(std::filesystem::exists(dir / "dyn_refused" / "dyn_ctx.onnx"));
  }
  SECTION("another backend's binary left from an earlier compile is said, not taken for new") {
    const auto out = dir / "stale_out";
    std::filesystem::create_directories(out);
    ortc::test::WriteFile(out / "m_cuda.bin", "an earlier CUDA compile's binary");
    auto r = RunOrtc("compile " + model + " --ep cpu --json -o " + out.string() + "/");
    REQUIRE(r.exit_code == 0);
    auto j = nlohmann::json::parse(r.out);
    REQUIRE(j["warnings"].size() == 1);
    CHECK_THAT(j["warnings"][0].get<std::string>(),
               Catch::Contains("m_cuda.bin is left from an earlier compile"));
    CHECK(std::filesystem::exists(out / "m_cuda.bin"));  // said, not removed
    auto again = nlohmann::json::parse(
        RunOrtc("compile " + model + " --json -o " + (dir / "fresh_out").string() + "/").out);
    CHECK(again["warnings"].empty());
  }
  SECTION("-o naming no folder and no .onnx file is said") {
    auto r = RunOrtc("compile " + model + " --json -o " + (dir / "newout").string());
    REQUIRE(r.exit_code == 0);
    auto j = nlohmann::json::parse(r.out);
    REQUIRE(j["warnings"].size() == 1);
    CHECK_THAT(j["warnings"][0].get<std::string>(), Catch::Contains("is not a folder"));
    CHECK(std::filesystem::is_regular_file(dir / "newout"));
    auto plain = nlohmann::json::parse(
        RunOrtc("compile " + model + " --json -o " + (dir / "named_ctx.onnx").string()).out);
    CHECK(plain["warnings"].empty());
  }
  SECTION("the CUDA backend compiles a static model on its own") {
    auto r = RunOrtc("compile " + model + " --ep cuda --json");
    CHECK(r.exit_code == 0);
    CHECK(std::filesystem::exists(dir / "m_cuda.bin"));
    CHECK_FALSE(std::filesystem::exists(dir / "m_cpu.bin"));  // cpu was not named in --ep
  }
  SECTION("an EPContext node named like a node left to ONNX Runtime") {
    // CUDA refuses the dynamic-shape node, which stays an ONNX node, named like the EPContext
    // node of the group CUDA takes.
    ModelBuilder b;
    b.Input("x", {-1, 4}).Input("z", {1, 4});
    b.Node("Relu", {"x"}, {"y1"}, {}, "c_cuda_0").Node("Relu", {"z"}, {"y2"}, {}, "r");
    b.Output("y1").Output("y2");
    b.Save(dir / "clash.onnx");
    auto r = RunOrtc("compile " + (dir / "clash.onnx").string() +
                     " --ep cuda --node-name-prefix c_ --json");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.out, Catch::Contains("EPContext node name 'c_cuda_0' clashes"));
    CHECK(FilesIn(dir.path()) == std::vector<std::string>{"clash.onnx", "m.onnx"});
  }
  SECTION("bad provider option") {
    auto r = RunOrtc("compile " + model + " --provider-option cpu-threads --json");
    CHECK(r.exit_code == 2);
    auto r2 = RunOrtc("compile " + model + " --provider-option cpu:unknown=1 --json");
    CHECK(r2.exit_code == 2);
    CHECK_THAT(r2.out, Catch::Contains("unknown"));
  }
  SECTION("a failure after the binary was written") {
    // The second group reads a string initializer, which the CPU backend takes (the runtime
    // holds strings) but a binary cannot store: compiling it fails after the first group's
    // weights are already in the (temporary) binary. (A complex64 one is refused earlier now,
    // at partition: the runtime holds no complex tensor.)
    ModelBuilder b;
    b.Input("x", {4}).Initializer("k", {4}, {1, 2, 3, 4});
    auto* t = b.proto().mutable_graph()->add_initializer();
    t->set_name("words");
    t->set_data_type(onnx::TensorProto::STRING);
    t->add_dims(1);
    t->add_string_data("late");
    b.Node("Add", {"x", "k"}, {"y1"}, {}, "first")
        .Node("Identity", {"words"}, {"y2"}, {}, "second");
    b.Output("y1").Output("y2", onnx::TensorProto::STRING);
    b.Save(dir / "late.onnx");
    auto r = RunOrtc("compile " + (dir / "late.onnx").string() + " --json");
    CHECK(r.exit_code == 4);
    CHECK_THAT(r.out, Catch::Contains("cannot be stored in a context binary"));
    CHECK(FilesIn(dir.path()) ==
          std::vector<std::string>{"late.onnx", "m.onnx"});  // no bin, no temp file
  }
}

TEST_CASE("inspect describes binaries and reports corruption precisely", "[inspect]") {
  TempDir dir;
  RepeatedWeightsModel().Save(dir / "m.onnx");
  REQUIRE(RunOrtc("compile " + (dir / "m.onnx").string() + " -q").exit_code == 0);
  auto ok = RunOrtc("inspect " + (dir / "m_cpu.bin").string() + " --json");
  REQUIRE(ok.exit_code == 0);
  auto j = nlohmann::json::parse(ok.out);
  CHECK(j["backend"] == "cpu");
  CHECK(j["weights"]["unique_count"] == 2);
  CHECK(j["weights"]["count"] == 3);
  CHECK(j["graphs"][0]["inputs"][0]["shape"] == nlohmann::json::array({2, 8}));

  auto ctx =
      nlohmann::json::parse(RunOrtc("inspect " + (dir / "m_ctx.onnx").string() + " --json").out);
  CHECK(ctx["ep_context_nodes"][0]["status"] == "ok");

  // Flip one weight byte: inspect names the weights section's checksum.
  std::string bytes = ReadFile((dir / "m_cpu.bin").string());
  bytes[4096 + 3] ^= 0x40;
  ortc::test::WriteFile(dir / "m_cpu.bin", bytes);
  auto bad = RunOrtc("inspect " + (dir / "m_cpu.bin").string() + " --json");
  CHECK(bad.exit_code == 3);
  CHECK(nlohmann::json::parse(bad.out)["error"]["code"] == "INVALID_GRAPH");
  CHECK_THAT(nlohmann::json::parse(bad.out)["error"]["message"].get<std::string>(),
             Catch::Contains("section 0 (weights): checksum mismatch"));
  auto bad_ctx = RunOrtc("inspect " + (dir / "m_ctx.onnx").string() + " --json");
  CHECK(bad_ctx.exit_code == 3);
  CHECK_THAT(bad_ctx.out, Catch::Contains("checksum mismatch"));

  // A binary from another compile: the ctx model's content id no longer matches.
  REQUIRE(RunOrtc("compile " + (dir / "m.onnx").string() + " -o " +
                  (dir / "other_ctx.onnx").string() + " --node-name-prefix m_ -q")
              .exit_code == 0);
  TwoBranchModel().Save(dir / "two.onnx");
  REQUIRE(RunOrtc("compile " + (dir / "two.onnx").string() + " -o " +
                  (dir / "x_ctx.onnx").string() + " --node-name-prefix m_ -q")
              .exit_code == 0);
  fs::copy_file(dir / "x_cpu.bin", dir / "other_cpu.bin", fs::copy_options::overwrite_existing);
  auto stale = RunOrtc("inspect " + (dir / "other_ctx.onnx").string() + " --json");
  CHECK(stale.exit_code == 3);
  CHECK_THAT(stale.out, Catch::Contains("stale pairing"));
}

TEST_CASE("ortc --version names the commit, the formats and the libraries it found", "[cli]") {
  auto r = RunOrtc("--version");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::StartsWith("ortc " ORTC_VERSION_STRING " (commit "));
  CHECK_THAT(r.out, Catch::Contains("context binary format 1.") &&
                        Catch::Contains("backend plugin ABI ") &&
                        Catch::Contains("ai.onnx opsets 1-24") && Catch::Contains("oneDNN ") &&
                        Catch::Contains("cuda compile: ") &&
                        Catch::Contains("cuda run on this machine: "));
  // The commit is this checkout's, not one from an earlier build.
  FILE* git = popen("git -C " ORTC_SOURCE_DIR " rev-parse --short=12 HEAD 2>/dev/null", "r");
  char head[64] = {};
  const bool have_git = git && fgets(head, sizeof head, git) != nullptr;
  if (git) pclose(git);
  if (have_git) {
    std::string commit(head);
    commit.erase(commit.find_last_not_of("\n") + 1);
    CHECK_THAT(r.out, Catch::Contains("(commit " + commit));
  } else {
    CHECK_THAT(r.out, Catch::Contains("(commit unknown)"));
  }
}
