// An interrupted compile leaves no file that looks valid: SIGTERM removes the temporary files,
// SIGKILL leaves only a hidden ".ortc-tmp" file, never a final name.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "model_builder.h"

using ortc::test::ModelBuilder;
using ortc::test::TempDir;
namespace fs = std::filesystem;

namespace {

// 1 GiB of weights in a sparse external file: the compile takes long enough to be caught.
void MakeSlowModel(const TempDir& dir) {
  const int64_t per = 64ll << 20, count = 16;  // 16 x 64 MiB
  { std::ofstream(dir / "w.data", std::ios::binary); }
  fs::resize_file(dir / "w.data", static_cast<uintmax_t>(per * count));
  ModelBuilder b;
  b.Input("x", {1, 4096});
  std::string prev = "x";
  for (int i = 0; i < count; ++i) {
    // Distinct shapes keep the all-zero weights from deduplicating into one.
    const int64_t rows = 4096 - i, cols = per / 4 / 4096;
    b.ExternalInitializer("w" + std::to_string(i), {rows * cols}, "w.data", i * per,
                          rows * cols * 4);
    b.Node("Add", {prev, "w" + std::to_string(i)}, {"h" + std::to_string(i)});
    prev = "h" + std::to_string(i);
  }
  b.Output(prev);
  b.Save(dir / "slow.onnx");
}

bool HasTempFile(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().find(".ortc-tmp-") != std::string::npos) return true;
  }
  return false;
}

// Starts ortc compile, waits until its temporary binary exists, then sends `sig`.
void CompileAndInterrupt(const TempDir& dir, int sig) {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const std::string model = (dir / "slow.onnx").string(), out = (dir / "out").string() + "/";
    execl(ORTC_BINARY, ORTC_BINARY, "compile", model.c_str(), "-o", out.c_str(), "-q",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  bool seen = false;
  for (int i = 0; i < 20000 && !seen; ++i) {
    seen = HasTempFile(dir / "out");
    if (!seen) std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  REQUIRE(seen);  // the compile was caught mid-way
  kill(pid, sig);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == sig);
  CHECK_FALSE(fs::exists(dir / "out" / "slow_ctx.onnx"));
  CHECK_FALSE(fs::exists(dir / "out" / "slow_cpu.bin"));
}

}  // namespace

TEST_CASE("SIGTERM during compile removes the temporary files", "[compile][interrupt]") {
  TempDir dir;
  MakeSlowModel(dir);
  fs::create_directories(dir / "out");
  CompileAndInterrupt(dir, SIGTERM);
  CHECK_FALSE(HasTempFile(dir / "out"));
}

TEST_CASE("SIGKILL during compile leaves no file under a final name", "[compile][interrupt]") {
  TempDir dir;
  MakeSlowModel(dir);
  fs::create_directories(dir / "out");
  CompileAndInterrupt(dir, SIGKILL);
}
