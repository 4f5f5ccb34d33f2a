// Two compiles into one folder publish one after the other (compile/publish_lock.h): while
// another process holds the folder's publish lock, a compile writes only its temp files and puts
// nothing at a final path; once the lock is released it publishes a matching pair.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "model_builder.h"
#include "run_ortc.h"
#include "test_data.h"

using ortc::test::FilesIn;
using ortc::test::ModelBuilder;
using ortc::test::RunOrtc;
using ortc::test::TempDir;
namespace fs = std::filesystem;

TEST_CASE("a compile waits for the folder's publish lock before its renames", "[compile]") {
  if (std::system("command -v flock >/dev/null 2>&1") != 0) {
    WARN("SKIP: the flock command is not installed");
    return;
  }
  TempDir dir;
  ModelBuilder m;
  m.Input("x", {1, 8}).Initializer("w", {8, 8}, std::vector<float>(64, 0.25f));
  m.Node("MatMul", {"x", "w"}, {"y"}).Output("y");
  m.Save(dir / "m.onnx");
  fs::create_directories(dir / "out");
  const std::string out = (dir / "out").string();
  // flock(1) holds the lock for 4 s; the compile starts meanwhile, and the folder is listed
  // while it must still be waiting (a tiny compile takes well under the 2 s given to it).
  const std::string script =
      "flock '" + out + "' sleep 4 & sleep 0.5; '" + std::string(ORTC_BINARY) + "' compile '" +
      (dir / "m.onnx").string() + "' -q -o '" + out + "/' & compile=$!; sleep 2; ls -A '" + out +
      "' > '" + (dir / "during.txt").string() + "'; wait $compile; echo $? > '" +
      (dir / "rc.txt").string() + "'; wait";
  REQUIRE(std::system(("sh -c \"" + script + "\"").c_str()) == 0);
  const std::string during = ortc::test::ReadFile((dir / "during.txt").string());
  INFO("while locked: " << during);
  // Its temp files are there (it compiled and waits to publish), the final names are not.
  CHECK(("\n" + during).find("\n.m_ctx.onnx.ortc-tmp-") != std::string::npos);
  CHECK(("\n" + during).find("\nm_ctx.onnx\n") == std::string::npos);
  CHECK(("\n" + during).find("\nm_cpu.bin\n") == std::string::npos);
  CHECK(ortc::test::ReadFile((dir / "rc.txt").string()) == "0\n");
  CHECK(FilesIn(dir / "out") == std::vector<std::string>{"m_cpu.bin", "m_ctx.onnx"});
  CHECK(RunOrtc("check " + out + "/m_ctx.onnx").exit_code == 0);
}
