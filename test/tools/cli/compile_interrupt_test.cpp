// An interrupted compile leaves no file that looks valid: SIGTERM removes the temporary files,
// SIGKILL leaves only a hidden ".ortc-tmp" file, never a final name.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "model_builder.h"
#include "run_ortc.h"

using ortc::test::ModelBuilder;
using ortc::test::TempDir;
namespace fs = std::filesystem;

namespace {

// `count` x 64 MiB of weights in a sparse external file (1 GiB by default): the compile takes
// long enough to be caught.
void MakeSlowModel(const TempDir& dir, int64_t count = 16) {
  const int64_t per = 64ll << 20;
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

TEST_CASE("the next compile into the folder removes the temporary files of a killed one",
          "[compile][interrupt]") {
  TempDir dir;
  MakeSlowModel(dir);
  fs::create_directories(dir / "out");
  CompileAndInterrupt(dir, SIGKILL);
  std::vector<fs::path> left;
  for (const auto& e : fs::directory_iterator(dir / "out")) left.push_back(e.path());
  REQUIRE(left.size() == 1);
  // The same name with a live writer (this test's pid), and with another host: both must stay.
  // Names are .<file>.ortc-tmp-<host>-<pid>-<random>.
  const std::string name = left[0].filename().string();
  const size_t random_dash = name.rfind('-'), pid_dash = name.rfind('-', random_dash - 1);
  const size_t host_at = name.find(".ortc-tmp-") + std::string(".ortc-tmp-").size();
  const std::string live = name.substr(0, pid_dash + 1) + std::to_string(getpid()) +
                           name.substr(random_dash),
                    other_host = name.substr(0, host_at) + "elsewhere" + name.substr(pid_dash);
  { std::ofstream(dir / "out" / live) << "x"; }
  { std::ofstream(dir / "out" / other_host) << "x"; }

  ortc::test::ModelBuilder small;
  small.Input("x", {1, 4}).Node("Relu", {"x"}, {"y"}).Output("y");
  small.Save(dir / "small.onnx");
  auto r = ortc::test::RunOrtc("compile " + (dir / "small.onnx").string() + " -o " +
                               (dir / "out").string() + "/ --json");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["removed_temp_files"].size() == 1);
  CHECK(fs::path(j["removed_temp_files"][0]["path"].get<std::string>()).filename() == name);
  CHECK_FALSE(fs::exists(left[0]));
  CHECK(fs::exists(dir / "out" / live));
  CHECK(fs::exists(dir / "out" / other_host));
}

TEST_CASE("of concurrent compiles with --error-if-output-exists exactly one writes",
          "[compile][interrupt]") {
  // The existence check before compiling cannot see a rival that finishes first; the final
  // renames refuse to replace, atomically, so exactly one compile publishes and the others
  // fail having removed what they had published.
  TempDir dir;
  ortc::test::ModelBuilder m;
  m.Input("x", {1, 64}).Node("Relu", {"x"}, {"h"}).Node("Sigmoid", {"h"}, {"y"}).Output("y");
  m.Save(dir / "m.onnx");
  for (int round = 0; round < 3; ++round) {
    const fs::path out = dir / ("out" + std::to_string(round));
    constexpr int kWriters = 6;
    std::vector<pid_t> pids;
    for (int i = 0; i < kWriters; ++i) {
      const pid_t pid = fork();
      REQUIRE(pid >= 0);
      if (pid == 0) {
        const std::string model = (dir / "m.onnx").string(), o = out.string() + "/";
        const std::string log = out.string() + "-" + std::to_string(i) + ".log";
        freopen(log.c_str(), "w", stderr);
        execl(ORTC_BINARY, ORTC_BINARY, "compile", model.c_str(), "-o", o.c_str(), "-q",
              "--error-if-output-exists", static_cast<char*>(nullptr));
        _exit(127);
      }
      pids.push_back(pid);
    }
    int succeeded = 0;
    for (pid_t pid : pids) {
      int status = 0;
      waitpid(pid, &status, 0);
      REQUIRE(WIFEXITED(status));
      CHECK((WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 2));
      succeeded += WEXITSTATUS(status) == 0;
    }
    CHECK(succeeded == 1);
    // What is there is one compile's pair: it loads (the content ids match) and runs.
    auto run = ortc::test::RunOrtc("run " + (out / "m_ctx.onnx").string());
    INFO(run.out);
    CHECK(run.exit_code == 0);
    CHECK_FALSE(HasTempFile(out));
  }
}

TEST_CASE("Ctrl-C during verify removes its scratch folder", "[compile][interrupt]") {
  // verify compiles into a folder of its own under TMPDIR; SIGINT once that folder holds the
  // compile's temporary binary must leave no trace of it.
  TempDir dir;
  MakeSlowModel(dir, 4);  // verify also runs the model twice: 256 MiB keeps it short
  const fs::path tmp = dir / "tmp";
  fs::create_directories(tmp);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    setenv("TMPDIR", tmp.c_str(), 1);
    const std::string model = (dir / "slow.onnx").string();
    execl(ORTC_BINARY, ORTC_BINARY, "verify", model.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  auto scratch_holds_temp = [&] {
    for (const auto& d : fs::directory_iterator(tmp))
      if (d.is_directory() && HasTempFile(d.path())) return true;
    return false;
  };
  bool seen = false;
  int status = 0;
  // Until the temporary binary shows, or verify ends (then it was too quick to catch: a failure).
  for (int i = 0; i < 240000 && !seen; ++i) {
    seen = scratch_holds_temp();
    if (!seen && waitpid(pid, &status, WNOHANG) == pid) break;
    if (!seen) std::this_thread::sleep_for(std::chrono::microseconds(250));
  }
  if (!seen) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  REQUIRE(seen);  // caught while compiling into its folder
  kill(pid, SIGINT);
  waitpid(pid, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGINT);
  CHECK(fs::is_empty(tmp));
}
