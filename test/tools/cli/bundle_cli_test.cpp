// Bundles for CI: the provenance a compile records (source sha256, options, compiler),
// `compile --if-changed`, `check --source`, and `compile --bundle DIR` / `check DIR`.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "model_builder.h"
#include "run_ortc.h"
#include "test_data.h"

using ortc::test::ModelBuilder;
using ortc::test::ReadFile;
using ortc::test::RunOrtc;
using ortc::test::TempDir;
using ortc::test::WriteFile;
namespace fs = std::filesystem;

namespace {

// sha256sum's answer, independent of ortc's own hashing.
std::string Sha256Sum(const fs::path& p) {
  FILE* f = popen(("sha256sum '" + p.string() + "'").c_str(), "r");
  REQUIRE(f);
  char out[65] = {};
  REQUIRE(fread(out, 1, 64, f) == 64);
  pclose(f);
  return std::string(out, 64);
}

std::string Metadata(const fs::path& ctx, const std::string& key) {
  const auto proto = ortc::test::LoadProto(ctx);
  for (const auto& p : proto.metadata_props())
    if (p.key() == key) return p.value();
  return "";
}

// y = x @ w, w in an external data file beside the model.
void MakeModel(const TempDir& dir, float scale) {
  std::string w;
  for (int i = 0; i < 8; ++i) {
    const float v = scale * static_cast<float>(i);
    w.append(reinterpret_cast<const char*>(&v), 4);
  }
  WriteFile(dir / "weights.bin", w);
  ModelBuilder b;
  b.Input("x", {1, 4}).ExternalInitializer("w", {4, 2}, "weights.bin", 0);
  b.Node("MatMul", {"x", "w"}, {"y"}).Output("y");
  b.Save(dir / "m.onnx");
}

nlohmann::json CompileJson(const std::string& args) {
  auto r = RunOrtc("compile " + args + " --json");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("a compile records the source's sha256, its options and the compiler", "[bundle]") {
  TempDir dir;
  MakeModel(dir, 1.f);
  CompileJson((dir / "m.onnx").string() + " -o " + (dir / "out").string() + "/");
  const fs::path ctx = dir / "out" / "m_ctx.onnx";
  // The model's bytes, then for each external data file "\n<location>\n" and its bytes.
  WriteFile(dir / "concat", ReadFile((dir / "m.onnx").string()) + "\nweights.bin\n" +
                                ReadFile((dir / "weights.bin").string()));
  CHECK(Metadata(ctx, "ortc.source_sha256") == Sha256Sum(dir / "concat"));
  auto options = nlohmann::json::parse(Metadata(ctx, "ortc.compile_options"));
  CHECK(options["backends"] == std::vector<std::string>{"cpu"});
  CHECK_THAT(Metadata(ctx, "ortc.compiler"),
             Catch::StartsWith("ortc ") && Catch::Contains("(commit "));
}

TEST_CASE("the recorded sha256 counts external data whose key spans a read chunk's end",
          "[bundle]") {
  // The hash reads the model in 1 MiB chunks and parses it for external data only when the
  // bytes name a "location" key: a doc string places that key across the first chunk's end.
  TempDir dir;
  MakeModel(dir, 1.f);
  const fs::path model = dir / "m.onnx";
  auto proto = ortc::test::LoadProto(model);
  const size_t chunk = 1 << 20, straddle = chunk - 3;
  size_t pad = chunk - 4096;
  for (int tries = 0; tries < 8; ++tries) {
    proto.set_doc_string(std::string(pad, ' '));
    const size_t at = proto.SerializeAsString().find("location");
    REQUIRE(at != std::string::npos);
    if (at == straddle) break;
    pad += straddle - at;  // the doc string's length prefix may grow: measure again
  }
  ortc::test::SaveProto(proto, model);
  REQUIRE(ReadFile(model.string()).find("location") == straddle);
  CompileJson(model.string() + " -o " + (dir / "out").string() + "/");
  WriteFile(dir / "concat", ReadFile(model.string()) + "\nweights.bin\n" +
                                ReadFile((dir / "weights.bin").string()));
  CHECK(Metadata(dir / "out" / "m_ctx.onnx", "ortc.source_sha256") == Sha256Sum(dir / "concat"));
}

TEST_CASE("compile --if-changed skips only what is up to date", "[bundle]") {
  TempDir dir;
  MakeModel(dir, 1.f);
  const std::string base =
      (dir / "m.onnx").string() + " -o " + (dir / "out").string() + "/ --if-changed";
  CHECK(CompileJson(base)["up_to_date"] == false);
  const fs::path bin = dir / "out" / "m_cpu.bin";
  const auto written = fs::last_write_time(bin);
  auto again = CompileJson(base);
  CHECK(again["up_to_date"] == true);
  CHECK(fs::last_write_time(bin) == written);  // nothing rewritten
  SECTION("the external weights change") {
    MakeModel(dir, 2.f);
    CHECK(CompileJson(base)["up_to_date"] == false);
  }
  SECTION("an option changes") {
    CHECK(CompileJson(base + " --provider-option cpu:conv_algorithm=direct")["up_to_date"] ==
          false);
    CHECK(CompileJson(base + " --provider-option cpu:conv_algorithm=direct")["up_to_date"] == true);
  }
  SECTION("the binary is not the one the ctx model was written with") {
    std::string bytes = ReadFile(bin.string());
    bytes[bytes.size() - 1] ^= 1;
    WriteFile(bin, bytes);
    CHECK(CompileJson(base)["up_to_date"] == false);
  }
  SECTION("the binary is gone") {
    fs::remove(bin);
    CHECK(CompileJson(base)["up_to_date"] == false);
    CHECK(fs::exists(bin));
  }
  SECTION("a killed compile's temporary file goes even when nothing is compiled") {
    // The temporary file of a writer on this host that is gone.
    const long dead = ortc::test::DeadPid();
    REQUIRE(dead > 0);
    const fs::path stale = dir / "out" / ortc::test::TempFileName("m_cpu.bin", dead);
    WriteFile(stale, "partial");
    auto j = CompileJson(base);
    CHECK(j["up_to_date"] == true);
    REQUIRE(j["removed_temp_files"].size() == 1);
    CHECK(fs::path(j["removed_temp_files"][0]["path"].get<std::string>()).filename() ==
          stale.filename());
    CHECK_FALSE(fs::exists(stale));
  }
}

TEST_CASE("check --source tells a fresh bundle from a stale one", "[bundle]") {
  TempDir dir;
  MakeModel(dir, 1.f);
  CompileJson((dir / "m.onnx").string() + " -o " + (dir / "out").string() + "/");
  const std::string check =
      "check " + (dir / "out" / "m_ctx.onnx").string() + " --source " + (dir / "m.onnx").string();
  auto fresh = RunOrtc(check + " --json");
  REQUIRE(fresh.exit_code == 0);
  CHECK(nlohmann::json::parse(fresh.out)["source"]["fresh"] == true);
  MakeModel(dir, 3.f);  // new external weights, same model file
  auto stale = RunOrtc(check + " --json");
  CHECK(stale.exit_code == 4);
  auto j = nlohmann::json::parse(stale.out);
  CHECK(j["source"]["fresh"] == false);
  CHECK_THAT(j["error"]["message"].get<std::string>(),
             Catch::Contains("changed since the compile"));
  // A ctx model from before provenance was recorded: stale, saying why.
  auto proto = ortc::test::LoadProto(dir / "out" / "m_ctx.onnx");
  proto.clear_metadata_props();
  ortc::test::SaveProto(proto, dir / "out" / "m_ctx.onnx");
  auto old = RunOrtc(check, true);
  CHECK(old.exit_code == 4);
  CHECK_THAT(old.out, Catch::Contains("records no source digest"));
}

TEST_CASE("compile --bundle writes a manifest that check verifies as a unit", "[bundle]") {
  TempDir dir;
  MakeModel(dir, 1.f);
  const fs::path b = dir / "bundle";
  const auto report = CompileJson((dir / "m.onnx").string() + " --bundle " + b.string() +
                                  " --external-initializers-file data.bin");
  // Every file the report lists, the manifest too, with its size on disk.
  for (const auto& f : report["files"]) {
    INFO(f.dump());
    CHECK(f["bytes"] == static_cast<int64_t>(fs::file_size(f["path"].get<std::string>())));
  }
  auto manifest = nlohmann::json::parse(ReadFile((b / "manifest.json").string()));
  CHECK(manifest["schema_version"] == 1);
  CHECK(manifest["sources"][0]["model"] == "m.onnx");
  std::set<std::string> kinds;
  for (const auto& f : manifest["files"]) {
    const fs::path p = b / f["path"].get<std::string>();
    INFO(p);
    CHECK(f["sha256"] == Sha256Sum(p));
    CHECK(f["bytes"] == static_cast<int64_t>(fs::file_size(p)));
    kinds.insert(f["kind"].get<std::string>());
  }
  CHECK(kinds == std::set<std::string>{"ctx_model", "context_binary"});
  auto ok = RunOrtc("check " + b.string() + " --json");
  REQUIRE(ok.exit_code == 0);
  CHECK(nlohmann::json::parse(ok.out)["models"][0]["backends"][0]["verdict"] == "optimal");

  SECTION("a modified file") {
    std::string bytes = ReadFile((b / "m_cpu.bin").string());
    bytes[bytes.size() / 2] ^= 0x10;
    WriteFile(b / "m_cpu.bin", bytes);
    auto r = RunOrtc("check " + b.string(), true);
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.out, Catch::Contains("m_cpu.bin") && Catch::Contains("sha256 differs"));
  }
  SECTION("a missing file") {
    fs::remove(b / "m_cpu.bin");
    CHECK(RunOrtc("check " + b.string()).exit_code == 5);
  }
  SECTION("a manifest pointing outside the bundle") {
    manifest["files"][0]["path"] = "../m.onnx";
    WriteFile(b / "manifest.json", manifest.dump());
    auto r = RunOrtc("check " + b.string(), true);
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.out, Catch::Contains("leaves the bundle"));
  }
  SECTION("no manifest") {
    // What a compile killed between publishing its models and writing the manifest leaves (it
    // removes the old manifest before its first rename): said as such, and --if-changed, with
    // the models up to date, writes the manifest again.
    fs::remove(b / "manifest.json");
    auto r = RunOrtc("check " + b.string(), true);
    CHECK(r.exit_code == 5);
    CHECK_THAT(r.out, Catch::Contains("did not finish"));
    auto again = CompileJson((dir / "m.onnx").string() + " --bundle " + b.string() +
                             " --external-initializers-file data.bin --if-changed");
    CHECK(again["up_to_date"] == true);
    CHECK(RunOrtc("check " + b.string()).exit_code == 0);
  }
  SECTION("a compile removes the old manifest before publishing and writes its own after") {
    // An older manifest would describe other files; a failed compile leaves none instead.
    WriteFile(dir / "other.onnx", ReadFile((dir / "m.onnx").string()));
    auto r = CompileJson((dir / "other.onnx").string() + " --bundle " + b.string());
    auto m = nlohmann::json::parse(ReadFile((b / "manifest.json").string()));
    CHECK(m["sources"][0]["model"] == "other.onnx");
    CHECK(RunOrtc("check " + b.string()).exit_code == 0);
  }
  SECTION("-o and --bundle together") {
    CHECK(RunOrtc("compile " + (dir / "m.onnx").string() + " --bundle " + b.string() + " -o " +
                  (dir / "x").string() + "/")
              .exit_code == 2);
  }
}
