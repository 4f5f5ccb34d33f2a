// The temporary-file registry's signal handling, in a forked child so the signals are real: a
// termination signal removes the registered files and kills the process, and one that arrives
// while signals are held waits until the hold ends.
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <thread>

#include "base/temp_registry.h"
#include "model_builder.h"

namespace fs = std::filesystem;
using ortc::test::TempDir;

namespace {

// Runs `body` in a child with the cleanup handlers installed; returns its wait status.
template <typename Body>
int InChild(Body body) {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ortc::format::InstallTempFileCleanup();
    body();
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

}  // namespace

TEST_CASE("a termination signal removes registered temporary files, then kills", "[format]") {
  TempDir dir;
  const fs::path temp = dir / "out.npy.ortc-tmp-1", other = dir / "kept.txt";
  const int status = InChild([&] {
    std::ofstream(temp) << "partial";
    std::ofstream(other) << "not registered";
    ortc::format::RegisterTempPath(temp.string());
    raise(SIGTERM);
    _exit(0);  // not reached
  });
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);
  CHECK_FALSE(fs::exists(temp));
  CHECK(fs::exists(other));
}

TEST_CASE("a signal while signals are held waits for the end of the hold", "[format]") {
  TempDir dir;
  const fs::path temp = dir / "a.bin.ortc-tmp-2", marker = dir / "hold_finished";
  const int status = InChild([&] {
    std::ofstream(temp) << "partial";
    ortc::format::RegisterTempPath(temp.string());
    {
      const ortc::format::TerminationSignalsHeld held;
      raise(SIGINT);
      // Still alive: the publish this guards completes.
      std::ofstream(marker) << "done";
    }
    _exit(0);  // not reached: the held signal kills at the end of the hold
  });
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGINT);
  CHECK(fs::exists(marker));
  CHECK_FALSE(fs::exists(temp));
}

TEST_CASE("a signal that lands on another thread is handled by the thread that installed it",
          "[format]") {
  // The main thread blocks SIGTERM; a worker that does not block it is sent one. Cleaning up on
  // the worker would kill the process at once (while the main thread might still be writing);
  // passed on, it waits for the main thread to unblock it, and the worker runs on.
  TempDir dir;
  const fs::path temp = dir / "z.npy.ortc-tmp-3", worker_ran_on = dir / "worker_ran_on",
                 main_saw_file = dir / "main_saw_file";
  const int status = InChild([&] {
    std::ofstream(temp) << "partial";
    ortc::format::RegisterTempPath(temp.string());
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &term, nullptr);
    std::thread worker([&] {
      pthread_sigmask(SIG_UNBLOCK, &term, nullptr);
      pthread_kill(pthread_self(), SIGTERM);  // handled before this returns
      std::ofstream(worker_ran_on) << "after the signal";
    });
    worker.join();
    if (fs::exists(temp)) std::ofstream(main_saw_file) << "still there";
    pthread_sigmask(SIG_UNBLOCK, &term, nullptr);  // the passed-on signal arrives here
    _exit(0);                                      // not reached
  });
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);
  CHECK(fs::exists(worker_ran_on));
  CHECK(fs::exists(main_saw_file));
  CHECK_FALSE(fs::exists(temp));
}
