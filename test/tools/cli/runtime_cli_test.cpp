// `ortc run`, `ortc check` and `ortc verify` end to end on the real binary.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "io/tensor_files.h"
#include "model_builder.h"
#include "run_ortc.h"
#include "test_data.h"

using namespace ortc;
using ortc::test::ModelBuilder;
using ortc::test::RunOrtc;
using ortc::test::TempDir;
namespace fs = std::filesystem;

namespace {

// y = Relu(x) * k + b on a [2, 4] input.
void MakeModel(const TempDir& dir) {
  ModelBuilder m;
  m.Input("x", {2, 4}).Initializer("k", {4}, {1, 2, 3, 4}).Initializer("b", {4}, {0.5f, 0, -1, 2});
  m.Node("Relu", {"x"}, {"r"})
      .Node("Mul", {"r", "k"}, {"m"})
      .Node("Add", {"m", "b"}, {"y"})
      .Output("y");
  m.Save(dir / "m.onnx");
}

}  // namespace

TEST_CASE("ortc run reads inputs, writes outputs and benchmarks", "[cli][run]") {
  TempDir dir;
  MakeModel(dir);
  REQUIRE(RunOrtc("compile " + (dir / "m.onnx").string() + " -q").exit_code == 0);
  const std::vector<float> xs = {-1, 1, -2, 2, 3, -3, 0.5f, -0.5f};
  REQUIRE(
      io::WriteNpy(dir / "x.npy", Tensor::FromBytes(DataType::kFloat, {2, 4}, xs.data(), 32)).ok());
  auto r =
      RunOrtc("run " + (dir / "m_ctx.onnx").string() + " --input x=" + (dir / "x.npy").string() +
              " --output-dir " + (dir / "out").string() + " --bench 3 --json");
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["latency_ms"]["runs"] == 3);
  CHECK(j["outputs"][0]["shape"] == std::vector<int64_t>{2, 4});
  auto y = io::ReadNpy(dir / "out" / "y.npy");
  REQUIRE(y.ok());
  const float k[4] = {1, 2, 3, 4}, b[4] = {0.5f, 0, -1, 2};
  for (int i = 0; i < 8; ++i)
    CHECK(y->data<float>()[i] == Approx(std::max(xs[i], 0.f) * k[i % 4] + b[i % 4]));
  // .pb output, and random inputs from a seed are reproducible.
  REQUIRE(RunOrtc("run " + (dir / "m_ctx.onnx").string() + " --seed 7 --output-dir " +
                  (dir / "p").string() + " --output-format pb")
              .exit_code == 0);
  REQUIRE(RunOrtc("run " + (dir / "m_ctx.onnx").string() + " --seed 7 --output-dir " +
                  (dir / "q").string() + " --output-format pb")
              .exit_code == 0);
  CHECK(ortc::test::ReadFile((dir / "p" / "y.pb").string()) ==
        ortc::test::ReadFile((dir / "q" / "y.pb").string()));
  CHECK(RunOrtc("run " + (dir / "m_ctx.onnx").string() +
                " --input x=" + (dir / "missing.npy").string())
            .exit_code == 5);
}

TEST_CASE("ortc check gives the verdict, for this machine or an injected device", "[cli][check]") {
  TempDir dir;
  MakeModel(dir);
  REQUIRE(RunOrtc("compile " + (dir / "m.onnx").string() + " -q").exit_code == 0);
  auto ok = RunOrtc("check " + (dir / "m_ctx.onnx").string() + " --json");
  REQUIRE(ok.exit_code == 0);
  CHECK(nlohmann::json::parse(ok.out)["backends"][0]["verdict"] == "optimal");
  ortc::test::WriteFile(dir / "be.json", R"({"cpu": {"arch": "ppc64", "little_endian": false}})");
  auto bad = RunOrtc("check " + (dir / "m_ctx.onnx").string() + " --device " +
                     (dir / "be.json").string() + " --json");
  CHECK(bad.exit_code == 4);  // a binary this device cannot run: not supported as asked
  CHECK_THAT(bad.out, Catch::Contains("big-endian"));
  ortc::test::WriteFile(dir / "junk.json", "not json");
  CHECK(RunOrtc("check " + (dir / "m_ctx.onnx").string() + " --device " +
                (dir / "junk.json").string())
            .exit_code == 2);
}

TEST_CASE("ortc verify compares compiled and source, and with expected outputs", "[cli][verify]") {
  TempDir dir;
  MakeModel(dir);
  const std::vector<float> xs = {-1, 1, -2, 2, 3, -3, 0.5f, -0.5f};
  REQUIRE(
      io::WriteNpy(dir / "x.npy", Tensor::FromBytes(DataType::kFloat, {2, 4}, xs.data(), 32)).ok());
  std::vector<float> good = {0.5f, 2, -1, 10, 3.5f, 0, 0.5f, 2};
  REQUIRE(
      io::WriteNpy(dir / "good.npy", Tensor::FromBytes(DataType::kFloat, {2, 4}, good.data(), 32))
          .ok());
  auto r =
      RunOrtc("verify " + (dir / "m.onnx").string() + " --input x=" + (dir / "x.npy").string() +
              " --expected y=" + (dir / "good.npy").string() + " --json");
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["ok"] == true);
  CHECK(j["outputs"][0]["max_abs_error"].get<double>() <= 1e-6);
  good[3] = 11;  // a wrong expectation must be caught
  REQUIRE(
      io::WriteNpy(dir / "bad.npy", Tensor::FromBytes(DataType::kFloat, {2, 4}, good.data(), 32))
          .ok());
  auto m =
      RunOrtc("verify " + (dir / "m.onnx").string() + " --input x=" + (dir / "x.npy").string() +
              " --expected y=" + (dir / "bad.npy").string() + " --json");
  CHECK(m.exit_code == 6);
  CHECK(nlohmann::json::parse(m.out)["outputs"][0]["expected"]["max_abs_error"].get<double>() ==
        Approx(1.0));
  // verify leaves no compiled files behind.
  CHECK_FALSE(fs::exists(dir / "m_ctx.onnx"));
}

TEST_CASE("ortc verify takes its default tolerances from the precision", "[cli][verify]") {
  TempDir dir;
  MakeModel(dir);
  const std::vector<float> xs = {-1, 1, -2, 2, 3, -3, 0.5f, -0.5f};
  REQUIRE(
      io::WriteNpy(dir / "x.npy", Tensor::FromBytes(DataType::kFloat, {2, 4}, xs.data(), 32)).ok());
  // The true outputs off by 0.5%: beyond fp32's tolerance, within tf32's and fp16's.
  std::vector<float> off = {0.5f, 2, -1, 10, 3.5f, 0, 0.5f, 2};
  for (float& v : off) v *= 1.005f;
  REQUIRE(io::WriteNpy(dir / "off.npy", Tensor::FromBytes(DataType::kFloat, {2, 4}, off.data(), 32))
              .ok());
  const std::string base = "verify " + (dir / "m.onnx").string() +
                           " --input x=" + (dir / "x.npy").string() +
                           " --expected y=" + (dir / "off.npy").string() + " --json";
  struct Case {
    std::string flags;
    int exit_code;
    double rtol, atol;
  };
  for (const Case& c : {Case{"", 6, 1e-4, 1e-5}, Case{" --precision tf32", 0, 1e-2, 1e-2},
                        Case{" --precision fp16", 0, 1e-2, 1e-2},
                        Case{" --precision fp16 --rtol 1e-4 --atol 1e-5", 6, 1e-4, 1e-5}}) {
    INFO(c.flags);
    auto r = RunOrtc(base + c.flags);
    CHECK(r.exit_code == c.exit_code);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["rtol"].get<double>() == Approx(c.rtol));
    CHECK(j["atol"].get<double>() == Approx(c.atol));
  }
  // A CPU bf16 bundle runs only where the CPU has AVX512-BF16; on any other CPU verify must
  // refuse it with the version gate's error (exit 4) instead of running it wrongly.
  auto bf16 = RunOrtc(base + " --precision bf16");
  if (__builtin_cpu_supports("avx512bf16")) {
    CHECK(bf16.exit_code == 0);
    auto j = nlohmann::json::parse(bf16.out);
    CHECK(j["rtol"].get<double>() == Approx(8e-2));
    CHECK(j["atol"].get<double>() == Approx(8e-2));
  } else {
    CHECK(bf16.exit_code == 4);
    CHECK_THAT(bf16.out, Catch::Contains("recompile without --precision bf16"));
  }
  CHECK(RunOrtc(base + " --precision fp8").exit_code == 2);
}

TEST_CASE("ortc run: --provider-option and --profile", "[cli][run]") {
  TempDir dir;
  MakeModel(dir);
  REQUIRE(RunOrtc("compile " + (dir / "m.onnx").string() + " -q").exit_code == 0);
  const std::string ctx = (dir / "m_ctx.onnx").string();
  auto r = RunOrtc("run " + ctx + " --bench 2 --json --profile " + (dir / "t.json").string());
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["graphs"].empty());  // a CPU bundle: no backend graph
  auto trace = nlohmann::json::parse(ortc::test::ReadFile((dir / "t.json").string()));
  int runs = 0, relu = 0;
  // Metadata events (thread names, "ph": "M") have no "cat": const operator[] on a missing key
  // is undefined behaviour in nlohmann::json, so every lookup here says what it expects.
  for (const auto& e : trace) {
    const std::string cat = e.value("cat", "");
    runs += cat == "Session";
    if (cat != "Node" || !e.contains("args")) continue;
    const auto& args = e.at("args");
    relu += args.value("op_type", "") == "Relu" && args.value("provider", "") == "cpu";
  }
  CHECK(runs == 3);  // the first run and two bench runs
  CHECK(relu == 3);
  CHECK(RunOrtc("run " + ctx + " --provider-option cuda").exit_code == 2);
  auto bad = RunOrtc("run " + ctx + " --provider-option npu:x=1 --json");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.out, Catch::Contains("no backend named 'npu'"));
  // The trace's folder is checked before the runs: a missing one fails at once, with the
  // folder named, however many runs were asked for.
  auto missing = RunOrtc(
      "run " + ctx + " --bench 100000 --profile " + (dir / "missing" / "t.json").string(), true);
  CHECK(missing.exit_code == 5);
  CHECK_THAT(missing.out, Catch::Contains("does not exist"));
  CHECK_THAT(missing.out, Catch::Contains("missing"));
  // A .npz archive is named as such, not misread as a TensorProto.
  ortc::test::WriteFile(dir / "x.npz", std::string("PK\x03\x04 archive", 12));
  auto npz = RunOrtc("run " + ctx + " --input x=" + (dir / "x.npz").string(), true);
  CHECK(npz.exit_code == 2);
  CHECK_THAT(npz.out, Catch::Contains("a .npz archive; give each array as its own .npy"));
}

TEST_CASE("run and verify take --input-shape as compile does, --shape as its alias",
          "[cli][run][verify]") {
  TempDir dir;
  ModelBuilder m;
  m.Input("x", {-1, 4}).Node("Relu", {"x"}, {"y"}).Output("y");  // dynamic batch "N"
  m.Save(dir / "dyn.onnx");
  const std::string model = (dir / "dyn.onnx").string();
  for (const std::string flag : {"--input-shape", "--shape"}) {
    INFO(flag);
    const fs::path out = dir / ("out" + flag);
    auto r = RunOrtc("run " + model + " " + flag + " x=3x4 --output-dir " + out.string());
    REQUIRE(r.exit_code == 0);
    auto y = io::ReadTensorFile(out / "y.npy");
    REQUIRE(y.ok());
    CHECK(y->shape() == std::vector<int64_t>{3, 4});
    CHECK(RunOrtc("verify " + model + " " + flag + " x=3x4").exit_code == 0);
  }
  // A shape is checked, never bent: a negative or zero dimension is refused.
  auto bad = RunOrtc("run " + model + " --shape x=-5x4", true);
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.out, Catch::Contains("'-5' is not a dimension"));
  CHECK(RunOrtc("run " + model + " --input-shape x=0x4").exit_code == 2);
  // Generated data is never taken for the user's: the report says what was fed, and when a
  // dynamic dim was set to 1.
  auto said = RunOrtc("run " + model + " --json");
  REQUIRE(said.exit_code == 0);
  auto said_json = nlohmann::json::parse(said.out);
  REQUIRE(said_json["inputs"].size() == 1);
  CHECK(said_json["inputs"][0]["source"] == "random");
  CHECK(said_json["inputs"][0]["shape"] == std::vector<int64_t>{1, 4});
  CHECK(said_json["inputs"][0]["dynamic_dims_set_to"] == 1);
  CHECK_THAT(RunOrtc("run " + model).out,
             Catch::Contains("input x: random float[1,4] (dynamic dims set to 1"));
  auto shaped = nlohmann::json::parse(RunOrtc("run " + model + " --input-shape x=3x4 --json").out);
  CHECK_FALSE(shaped["inputs"][0].contains("dynamic_dims_set_to"));
  // A name that is no input is a typo, said with the names there are, for shapes and data.
  auto typo = RunOrtc("run " + model + " --input-shape nosuch=3x4", true);
  CHECK(typo.exit_code == 2);
  CHECK_THAT(typo.out, Catch::Contains("'nosuch', which is not an input of the model (inputs: x)"));
  const fs::path data = dir / "x.npy";
  REQUIRE(io::WriteTensorFile(data, test::RandomTensor({3, 4}, 7)).ok());
  auto data_typo = RunOrtc("run " + model + " --input nosuch=" + data.string(), true);
  CHECK(data_typo.exit_code == 2);
  CHECK_THAT(data_typo.out, Catch::Contains("--input names 'nosuch'"));
  // Data and a shape that disagree: neither silently wins.
  auto clash =
      RunOrtc("run " + model + " --input x=" + data.string() + " --input-shape x=5x4", true);
  CHECK(clash.exit_code == 2);
  CHECK_THAT(clash.out, Catch::Contains("holds shape [3, 4] but --input-shape gives [5, 4]"));
  auto from_file = nlohmann::json::parse(
      RunOrtc("run " + model + " --input x=" + data.string() + " --input-shape x=3x4 --json").out);
  CHECK(from_file["inputs"][0]["source"] == "file");
  // A shape past the runtime's bound on one tensor is refused by compile too, not compiled into a
  // bundle every run would refuse.
  auto huge = RunOrtc("compile " + model + " --input-shape x=9223372036854775807x4 -o " +
                          (dir / "huge").string() + "/",
                      true);
  CHECK(huge.exit_code == 2);
  CHECK_THAT(huge.out, Catch::Contains("more than 2^40 elements"));
  CHECK_FALSE(fs::exists(dir / "huge" / "dyn_ctx.onnx"));
}

TEST_CASE("ortc run refuses generated inputs that cannot fit in memory before making any",
          "[cli][run]") {
  // 16 declared [2^30] int64 inputs: 128 GiB of random data, each within the per-input bound.
  TempDir dir;
  ModelBuilder m;
  for (int i = 0; i < 16; ++i) {
    const std::string x = "x" + std::to_string(i), y = "y" + std::to_string(i);
    m.Input(x, {int64_t{1} << 30}, onnx::TensorProto::INT64).Node("Identity", {x}, {y}).Output(y);
  }
  m.Save(dir / "huge.onnx");
  auto r = RunOrtc("run " + (dir / "huge.onnx").string(), true);
  INFO(r.out);
  CHECK(r.exit_code == 8);  // out of memory, said before any of it is allocated
  CHECK_THAT(r.out, Catch::Contains("OUT_OF_MEMORY: the generated inputs would take 128.0 GiB"));
}

TEST_CASE("ortc verify fails when a backend it was asked for compiled nothing", "[cli][verify]") {
  TempDir dir;
  ModelBuilder m;
  m.Input("x", {-1, 4}).Node("Sigmoid", {"x"}, {"y"}).Output("y");  // dynamic: CUDA refuses
  m.Save(dir / "dyn.onnx");
  auto r = RunOrtc("verify " + (dir / "dyn.onnx").string() + " --ep cuda,cpu --json");
  CHECK(r.exit_code == 4);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["ok"] == false);
  CHECK(j["error"]["code"] == "NOT_IMPLEMENTED");
  CHECK_THAT(j["error"]["message"].get<std::string>(),
             Catch::Contains("backend cuda compiled no node") && Catch::Contains("dynamic shape"));
  // verify takes compile's flags: with the shape fixed CUDA takes the node (then runs it, or
  // says why this machine cannot).
  auto fixed = RunOrtc("verify " + (dir / "dyn.onnx").string() +
                           " --ep cuda,cpu --input-shape x=2x4 --max-partitions 1 --json",
                       true);
  INFO(fixed.out);
  if (ortc::test::NvrtcNotFound(fixed)) {
    WARN("SKIP: the CUDA compile needs NVRTC");
    return;
  }
  CHECK_THAT(fixed.out, !Catch::Contains("compiled no node"));
  CHECK((fixed.exit_code == 0 || fixed.exit_code == 7));
}

TEST_CASE("ortc run writes every output to a file of its own, whatever the names", "[cli][run]") {
  TempDir dir;
  ModelBuilder m;  // "a/b" and "a_b" map to the same file name; ".." is no file name at all
  m.Input("x", {2, 3})
      .Output("a/b")
      .Output("a_b")
      .Output("..")
      .Node("Relu", {"x"}, {"a/b"})
      .Node("Neg", {"x"}, {"a_b"})
      .Node("Abs", {"x"}, {".."});
  m.Save(dir / "names.onnx");
  REQUIRE(RunOrtc("compile " + (dir / "names.onnx").string() + " -q").exit_code == 0);
  auto r = RunOrtc(
      "run " + (dir / "names_ctx.onnx").string() + " --output-dir " + (dir / "out").string(), true);
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("output 'a_b' is written as a_b_2"));
  CHECK(ortc::test::FilesIn(dir / "out") ==
        std::vector<std::string>{"a_b.npy", "a_b_2.npy", "output_2.npy"});
  auto relu = io::ReadNpy(dir / "out" / "a_b.npy");
  auto neg = io::ReadNpy(dir / "out" / "a_b_2.npy");
  REQUIRE(relu.ok());
  REQUIRE(neg.ok());
  // Relu(x) and -x of the same random x: each file holds its own output.
  for (int i = 0; i < 6; ++i)
    CHECK(relu->data<float>()[i] == std::max(-neg->data<float>()[i], 0.f));
}

TEST_CASE("ortc run --bench stopped by Ctrl-C reports the runs done, then dies of the signal",
          "[cli][run]") {
  TempDir dir;
  ModelBuilder m;
  m.Input("x", {1, 4}).Node("Relu", {"x"}, {"y"}).Output("y");
  m.Save(dir / "relu.onnx");
  const std::string run = "run " + (dir / "relu.onnx").string() + " --bench 1000000000";
  // SIGINT after 3 s, well into a benchmark that would take hours.
  const std::string after = "timeout --preserve-status -s INT 3";
  auto json = ortc::test::RunOrtcWith(after, run + " --json", false);
  CHECK(json.exit_code == 130);  // 128 + SIGINT: it still dies of the signal
  INFO(json.out);
  const auto j = nlohmann::json::parse(json.out);
  REQUIRE(j.contains("interrupted"));
  CHECK(j["interrupted"]["signal"] == "SIGINT");
  CHECK(j["interrupted"]["runs_asked"] == 1000000000);
  const int64_t done = j["interrupted"]["runs_done"].get<int64_t>();
  CHECK(done > 0);
  CHECK(done < 1000000000);
  CHECK(j["latency_ms"]["runs"] == done);

  auto text = ortc::test::RunOrtcWith(after, run, true);
  INFO(text.out);
  CHECK(text.exit_code == 130);
  CHECK_THAT(text.out,
             Catch::Contains("interrupted after") && Catch::Contains("ortc: interrupted (SIGINT)"));
}

TEST_CASE("ortc run --output-dir removes temporary files of runs killed mid-write", "[cli][run]") {
  TempDir dir;
  ModelBuilder m;
  m.Input("x", {1, 4}).Node("Relu", {"x"}, {"y"}).Output("y");
  m.Save(dir / "relu.onnx");
  fs::create_directories(dir / "out");
  // The temporary file of a run on this host that is gone, and one of this (live) process,
  // which must stay.
  const long child = ortc::test::DeadPid();
  REQUIRE(child > 0);
  const auto temp = [&](long pid) { return dir / "out" / ortc::test::TempFileName("y.npy", pid); };
  { std::ofstream(temp(child)) << "partial"; }
  { std::ofstream(temp(getpid())) << "in progress"; }
  auto r = RunOrtc("run " + (dir / "relu.onnx").string() + " --output-dir " +
                   (dir / "out").string() + " --json");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["removed_temp_files"].size() == 1);
  CHECK(fs::path(j["removed_temp_files"][0]["path"].get<std::string>()).filename() ==
        temp(child).filename());
  CHECK_FALSE(fs::exists(temp(child)));
  CHECK(fs::exists(temp(getpid())));
  CHECK(fs::exists(dir / "out" / "y.npy"));
}

TEST_CASE("ortc run opens a plain model whose ops the compiler rewrites at load", "[cli][run]") {
  // Opset 23's RMSNormalization has no CPU kernel: `ortc run` runs it as the compiler reads it
  // (x / sqrt(mean(x^2) + eps) * scale), the way `ortc compile` would.
  TempDir dir;
  ModelBuilder m(23, 11);
  m.Input("x", {1, 2}).Initializer("s", {2}, {1, 2});
  m.Node("RMSNormalization", {"x", "s"}, {"y"}, {ortc::test::Attr("epsilon", 0.0f)}, "rms");
  m.Output("y");
  m.Save(dir / "rms.onnx");
  const std::vector<float> x = {3, -3};
  REQUIRE(io::WriteTensorFile(
              (dir / "x.npy").string(),
              Tensor::FromBytes(DataType::kFloat, {1, 2}, x.data(), x.size() * sizeof(float)))
              .ok());
  auto r = RunOrtc("run " + (dir / "rms.onnx").string() + " --input x=" + (dir / "x.npy").string() +
                   " --output-dir " + (dir / "out").string());
  REQUIRE(r.exit_code == 0);
  auto y = io::ReadTensorFile((dir / "out" / "y.npy").string());
  REQUIRE(y.ok());
  CHECK(y->data<float>()[0] == Approx(1.0f));  // mean square 9: x / 3 * scale
  CHECK(y->data<float>()[1] == Approx(-2.0f));
}
