// Every exit code of the table (tools/cli/exit_codes.h) reached by the condition it
// documents, for every command that can meet that condition: 0 success, 2 bad command line, 3
// invalid model, 4 not supported as asked, 5 file not found, 6 verify mismatch, 7 a driver or
// toolchain missing.
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <string>

#include <nlohmann/json.hpp>

#include "io/tensor_files.h"
#include "model_builder.h"
#include "run_ortc.h"
#include "test_data.h"

using namespace ortc;
namespace fs = std::filesystem;
using ortc::test::ModelBuilder;
using ortc::test::RunOrtc;
using ortc::test::RunOrtcWith;
using ortc::test::TempDir;
using ortc::test::WriteFile;

namespace {

// The files the cases use: a good model and its CPU bundle, a file that is not ONNX, a model
// with an op no backend runs, and one that CUDA must split in two.
struct Files {
  TempDir dir;
  std::string good, bundle, junk, custom, split, missing;
  Files() {
    ModelBuilder m;
    m.Input("x", {2, 4}).Initializer("k", {4}, {1, 2, 3, 4});
    m.Node("Relu", {"x"}, {"r"}).Node("Mul", {"r", "k"}, {"y"}).Output("y");
    good = (dir / "m.onnx").string();
    m.Save(good);
    REQUIRE(RunOrtc("compile " + good + " -q").exit_code == 0);
    bundle = (dir / "m_ctx.onnx").string();
    junk = (dir / "junk.onnx").string();
    WriteFile(junk, "this is not a protobuf");
    ModelBuilder c(17, 8);
    c.Input("x", {2});
    c.Opset("com.example", 1).Node("Frob", {"x"}, {"y"}, {}, "frob", "com.example");
    c.Output("y");
    custom = (dir / "custom.onnx").string();
    c.Save(custom);
    // Relu -> Hardmax (CUDA refuses it) -> Add(h, r): CUDA gets two groups.
    ModelBuilder s(17, 8);
    s.Input("x", {1, 4});
    s.Node("Relu", {"x"}, {"r"}).Node("Hardmax", {"r"}, {"h"}).Node("Add", {"h", "r"}, {"a"});
    s.Node("Sigmoid", {"a"}, {"y"}).Output("y");
    split = (dir / "split.onnx").string();
    s.Save(split);
    missing = (dir / "absent.onnx").string();
  }
  std::string Out(const std::string& name) const { return (dir / name).string() + "/"; }
};

bool HasCudaDriver() {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h) dlclose(h);
  return h != nullptr;
}

// A CUDA bundle of the good model, or "" (with the reason) when NVRTC is not here.
std::string CudaBundle(const Files& f, std::string* why) {
  auto r = RunOrtc("compile " + f.good + " --ep cuda,cpu -o " + f.Out("cuda") + " -q", true);
  if (ortc::test::NvrtcNotFound(r)) {
    *why = r.out;
    return "";
  }
  REQUIRE(r.exit_code == 0);
  return f.Out("cuda") + "m_ctx.onnx";
}

}  // namespace

TEST_CASE("exit codes: compile", "[cli][exit_codes]") {
  Files f;
  CHECK(RunOrtc("compile " + f.good + " -o " + f.Out("ok") + " -q").exit_code == 0);
  CHECK(RunOrtc("compile " + f.good + " --ep tpu -o " + f.Out("a") + " -q").exit_code == 2);
  CHECK(RunOrtc("compile " + f.good + " --no-such-flag").exit_code == 2);
  CHECK(RunOrtc("compile " + f.junk + " -o " + f.Out("b") + " -q").exit_code == 3);
  CHECK(RunOrtc("compile " + f.custom + " -o " + f.Out("c") + " -q").exit_code == 4);
  CHECK(RunOrtc("compile " + f.split + " --ep cuda,cpu --max-partitions 1 -o " + f.Out("d") + " -q")
            .exit_code == 4);
  CHECK(RunOrtc("compile " + f.missing + " -o " + f.Out("e") + " -q").exit_code == 5);
  // NVRTC looked for only where it is not: the toolchain is missing.
  auto r = RunOrtcWith("env ORTC_NVRTC_LIBRARY=" + (f.dir / "no-libnvrtc.so").string(),
                       "compile " + f.good + " --ep cuda,cpu -o " + f.Out("g") + " -q", true);
  INFO(r.out);
  CHECK(r.exit_code == 7);
  CHECK_THAT(r.out, Catch::Contains("NVRTC"));
}

TEST_CASE("exit codes: partition", "[cli][exit_codes]") {
  Files f;
  CHECK(RunOrtc("partition " + f.good).exit_code == 0);
  CHECK(RunOrtc("partition " + f.good + " --ep tpu").exit_code == 2);
  CHECK(RunOrtc("partition " + f.junk).exit_code == 3);
  CHECK(RunOrtc("partition " + f.custom).exit_code == 4);
  CHECK(RunOrtc("partition " + f.split + " --ep cuda,cpu --max-partitions 1").exit_code == 4);
  CHECK(RunOrtc("partition " + f.missing).exit_code == 5);
}

TEST_CASE("exit codes: run", "[cli][exit_codes]") {
  Files f;
  CHECK(RunOrtc("run " + f.bundle).exit_code == 0);
  CHECK(RunOrtc("run " + f.good).exit_code == 0);  // a plain ONNX model runs too
  CHECK(RunOrtc("run " + f.bundle + " --shape x=abc").exit_code == 2);
  CHECK(RunOrtc("run " + f.junk).exit_code == 3);
  CHECK(RunOrtc("run " + f.custom).exit_code == 4);
  CHECK(RunOrtc("run " + f.missing).exit_code == 5);
  CHECK(RunOrtc("run " + f.bundle + " --input x=" + (f.dir / "none.npy").string()).exit_code == 5);
  std::string why;
  const std::string cuda = CudaBundle(f, &why);
  if (cuda.empty()) {
    WARN("SKIP: the CUDA part needs NVRTC: " << why);
  } else if (HasCudaDriver()) {
    WARN("SKIP: this machine has a CUDA driver; exit 7 for its absence cannot be shown here");
  } else {
    auto r = RunOrtc("run " + cuda, true);
    INFO(r.out);
    CHECK(r.exit_code == 7);
    CHECK_THAT(r.out, Catch::Contains("no CUDA driver found"));
  }
}

TEST_CASE("exit codes: verify", "[cli][exit_codes]") {
  Files f;
  CHECK(RunOrtc("verify " + f.good).exit_code == 0);
  CHECK(RunOrtc("verify " + f.good + " --ep tpu").exit_code == 2);
  CHECK(RunOrtc("verify " + f.junk).exit_code == 3);
  CHECK(RunOrtc("verify " + f.custom).exit_code == 4);
  CHECK(RunOrtc("verify " + f.missing).exit_code == 5);
  const std::vector<float> x = {1, -1, 2, -2, 3, -3, 4, -4}, wrong(8, 100.f);
  REQUIRE(io::WriteNpy(f.dir / "x.npy", Tensor::FromBytes(DataType::kFloat, {2, 4}, x.data(), 32))
              .ok());
  REQUIRE(io::WriteNpy(f.dir / "wrong.npy",
                       Tensor::FromBytes(DataType::kFloat, {2, 4}, wrong.data(), 32))
              .ok());
  CHECK(RunOrtc("verify " + f.good + " --input x=" + (f.dir / "x.npy").string() +
                " --expected y=" + (f.dir / "wrong.npy").string())
            .exit_code == 6);
}

TEST_CASE("exit codes: check", "[cli][exit_codes]") {
  Files f;
  CHECK(RunOrtc("check " + f.bundle).exit_code == 0);
  CHECK(RunOrtc("check " + f.bundle + " --device '{not json'").exit_code == 2);
  CHECK(RunOrtc("check " + f.junk).exit_code == 3);
  CHECK(RunOrtc("check " + f.missing).exit_code == 5);
  // Weights packed for AVX2, on a device without it: runs after repacking ("prefer
  // recompilation"), which --require-optimal refuses.
  auto packed =
      RunOrtc("compile " + f.good + " --target-isa avx2 -o " + f.Out("avx2") + " -q", true);
  const std::string sse =
      R"('{"cpu": {"arch": "x86_64", "little_endian": true, "isa": ["sse4.2"]}}')";
  if (packed.exit_code != 0) {
    WARN("SKIP: --target-isa avx2 needs a CPU with AVX2: " << packed.out);
  } else {
    const std::string ctx = f.Out("avx2") + "m_ctx.onnx";
    CHECK(RunOrtc("check " + ctx + " --device " + sse).exit_code == 0);
    auto strict = RunOrtc("check " + ctx + " --device " + sse + " --require-optimal", true);
    INFO(strict.out);
    CHECK(strict.exit_code == 4);
    CHECK_THAT(strict.out, Catch::Contains("optimal"));
  }
  // A binary this device cannot run: big-endian.
  CHECK(RunOrtc("check " + f.bundle +
                R"( --device '{"cpu": {"arch": "ppc64", "little_endian": false}}')")
            .exit_code == 4);
  // A CUDA bundle on a device with no CUDA: the driver is missing.
  std::string why;
  const std::string cuda = CudaBundle(f, &why);
  if (cuda.empty()) {
    WARN("SKIP: the CUDA part needs NVRTC: " << why);
  } else {
    auto r = RunOrtc("check " + cuda + " --device " + sse, true);
    INFO(r.out);
    CHECK(r.exit_code == 7);
  }
}

TEST_CASE("exit codes: inspect", "[cli][exit_codes]") {
  Files f;
  CHECK(RunOrtc("inspect " + f.bundle).exit_code == 0);
  CHECK(RunOrtc("inspect").exit_code == 2);
  CHECK(RunOrtc("inspect " + f.junk).exit_code == 3);
  CHECK(RunOrtc("inspect " + f.missing).exit_code == 5);
  // A ctx model whose binary is missing, or is a folder: a file problem (5), as for run and
  // check, not an invalid model.
  for (const char* what : {"missing", "folder"}) {
    INFO(what);
    const std::string out = f.Out(std::string("nobin_") + what);
    REQUIRE(RunOrtc("compile " + f.good + " -o " + out + " -q").exit_code == 0);
    fs::remove(out + "m_cpu.bin");
    if (std::string(what) == "folder") fs::create_directory(out + "m_cpu.bin");
    for (const char* command : {"inspect", "run", "check"}) {
      INFO(command);
      CHECK(RunOrtc(std::string(command) + " " + out + "m_ctx.onnx").exit_code == 5);
    }
  }
  // A context binary with a flipped byte in its weights: the checksum names it.
  const std::string bin = (f.dir / "m_cpu.bin").string();
  std::string bytes = ortc::test::ReadFile(bin);
  bytes[4096 + 3] ^= 0x5a;  // a weight byte (the weights section starts at 4096)
  WriteFile(f.dir / "m_cpu.bin", bytes);
  CHECK(RunOrtc("inspect " + bin).exit_code == 3);
}

TEST_CASE("exit codes: a mistyped command or backend is named, with what was meant",
          "[cli][exit_codes]") {
  Files f;
  auto r = RunOrtc("compil " + f.good, true);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Catch::Contains("unknown command 'compil'; did you mean 'compile'?") &&
                        Catch::Contains("commands: compile, inspect"));
  r = RunOrtc("frobnicate", true);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Catch::Contains("unknown command 'frobnicate' (commands:"));
  r = RunOrtc("compile " + f.good + " --ep cdua -o " + f.Out("cdua"), true);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Catch::Contains("unknown backend 'cdua' in --ep (known: cpu, cuda)"));
  r = RunOrtc("compile " + f.good + " --provider-option cdua:x=1 -o " + f.Out("cdua"), true);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Catch::Contains("(known: cpu, cuda)"));
  // With --json, a line that does not parse still answers with one JSON report on stdout.
  for (const std::string& line : std::vector<std::string>{"compile " + f.good + " --bogus --json",
                                                          "compil " + f.good + " --json"}) {
    r = RunOrtc(line);  // stdout only
    INFO(line << "\n" << r.out);
    CHECK(r.exit_code == 2);
    const auto j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
    REQUIRE(j.is_object());
    CHECK(j["ok"] == false);
    CHECK(j["error"]["code"] == "INVALID_ARGUMENT");
    CHECK(j.contains("schema_version"));
  }
}

TEST_CASE("exit codes: a report that cannot be written to stdout is an I/O error",
          "[cli][exit_codes]") {
  Files f;
  // stderr to the pipe, stdout to a full device; the shell then prints the exit code.
  for (const std::string& cmd :
       std::vector<std::string>{"inspect " + f.bundle + " --json", "check " + f.bundle + " --json",
                                "partition " + f.good + " --json", "check --print-device"}) {
    const auto r = RunOrtc(cmd + " 2>&1 >/dev/full; echo rc=$?", true);
    INFO(cmd << "\n" << r.out);
    CHECK_THAT(r.out, Catch::Contains("rc=5"));
    CHECK_THAT(r.out, Catch::Contains("cannot write to standard output"));
  }
  // Help into a full stdout is no success either.
  CHECK_THAT(RunOrtc("compile --help >/dev/full; echo rc=$?").out, Catch::Contains("rc=5"));
}

TEST_CASE("exit codes: a file-size limit is an I/O error that leaves nothing behind",
          "[cli][exit_codes]") {
  TempDir dir;
  ModelBuilder m;  // 64 KiB of weights and a 64 KiB output: both past a 16 KiB limit
  m.Input("x", {256, 64}).Initializer("w", {64, 256}, std::vector<float>(64 * 256, 0.5f));
  m.Node("MatMul", {"x", "w"}, {"y"}).Output("y");
  m.Save(dir / "big.onnx");
  fs::create_directories(dir / "out");
  // ulimit -f counts 1024-byte blocks; without the limit's signal ignored the process would die
  // of SIGXFSZ (exit 153) with its temp file left.
  auto r = ortc::test::RunOrtcWith(
      "ulimit -f 16;",
      "compile " + (dir / "big.onnx").string() + " -o " + (dir / "out").string() + "/", true);
  INFO(r.out);
  CHECK(r.exit_code == 5);
  CHECK_THAT(r.out, Catch::Contains("File too large"));
  CHECK(ortc::test::FilesIn(dir / "out").empty());  // no bundle, no hidden temp file
  REQUIRE(
      RunOrtc("compile " + (dir / "big.onnx").string() + " -q -o " + (dir / "out").string() + "/")
          .exit_code == 0);
  fs::create_directories(dir / "res");
  r = ortc::test::RunOrtcWith(
      "ulimit -f 16;",
      "run " + (dir / "out" / "big_ctx.onnx").string() + " --output-dir " + (dir / "res").string(),
      true);
  INFO(r.out);
  CHECK(r.exit_code == 5);
  CHECK(ortc::test::FilesIn(dir / "res").empty());
  // A Chrome trace of 20 runs (several KiB) past a 1 KiB limit: no partial trace either.
  r = ortc::test::RunOrtcWith("ulimit -f 1;",
                              "run " + (dir / "out" / "big_ctx.onnx").string() +
                                  " --bench 20 --profile " + (dir / "res" / "trace.json").string(),
                              true);
  INFO(r.out);
  CHECK(r.exit_code == 5);
  CHECK(ortc::test::FilesIn(dir / "res").empty());
}

TEST_CASE("every --json report has schema_version, and errors as {code, message}",
          "[cli][exit_codes]") {
  Files f;
  const std::vector<std::string> ok = {"compile " + f.good + " -o " + f.Out("j") + " --json",
                                       "partition " + f.good + " --json",
                                       "run " + f.bundle + " --json",
                                       "verify " + f.good + " --json",
                                       "check " + f.bundle + " --json",
                                       "inspect " + f.bundle + " --json"};
  for (const auto& args : ok) {
    INFO(args);
    auto r = RunOrtc(args);
    REQUIRE(r.exit_code == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["schema_version"] == 3);
    CHECK(j["ok"] == true);
  }
  for (const std::string command : {"compile", "partition", "run", "verify", "check", "inspect"}) {
    INFO(command);
    auto r = RunOrtc(command + " " + f.missing + " --json");
    CHECK(r.exit_code == 5);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["schema_version"] == 3);
    CHECK(j["ok"] == false);
    CHECK(j["error"]["code"] == "NO_SUCHFILE");
    CHECK(j["error"]["message"].is_string());
  }
}
