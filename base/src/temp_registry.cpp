#include "base/temp_registry.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>

namespace ortc::format {
namespace {

// Fixed storage the handler can read safely. A slot is claimed, its path written, then
// published: the handler reads only published paths.
constexpr int kSlots = 64;
constexpr size_t kPathMax = 4096;
std::array<std::array<char, kPathMax>, kSlots> g_paths;
std::array<std::atomic<bool>, kSlots> g_claimed;
std::array<std::atomic<bool>, kSlots> g_published;
std::atomic<int> g_held{0};          // TerminationSignalsHeld scopes alive
std::atomic<int> g_pending{0};       // a signal that arrived while held
std::atomic<long> g_main_thread{0};  // the thread that installed the handler, which writes

// Files first, then folders (a registered folder is removed once the files in it are gone).
void RemoveAll() {
  for (int i = 0; i < kSlots; ++i)
    if (g_published[i].load(std::memory_order_acquire)) ::unlink(g_paths[i].data());
  for (int i = 0; i < kSlots; ++i)
    if (g_published[i].load(std::memory_order_acquire)) ::rmdir(g_paths[i].data());
}

// Said on stderr with write(2), the one output call a signal handler may make.
void SayInterrupted(int sig) {
  const char* text = sig == SIGINT    ? "\nortc: interrupted (SIGINT)\n"
                     : sig == SIGTERM ? "\nortc: terminated (SIGTERM)\n"
                                      : "\nortc: hung up (SIGHUP)\n";
  const ssize_t ignored = ::write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

void Die(int sig) {
  RemoveAll();
  SayInterrupted(sig);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

long ThisThread() {
  return ::syscall(SYS_gettid);
}

extern "C" void OnTerminationSignal(int sig) {
  // A signal sent to the process lands on any thread that does not block it, often an OpenMP
  // or BLAS worker. Cleaning up there would race the main thread, which does the writing: it
  // could find its temporary file gone and fail with "cannot write" (exit 5) before the raise
  // in Die kills the process. So the signal goes on to the main thread, which stops where it
  // is and cleans up; the worker carries on the moment it takes.
  if (const long main_thread = g_main_thread.load();
      main_thread != 0 && ThisThread() != main_thread) {
    const int saved_errno = errno;
    ::syscall(SYS_tgkill, ::getpid(), main_thread, sig);
    errno = saved_errno;
    return;
  }
  if (g_held.load() > 0) {
    int none = 0;
    g_pending.compare_exchange_strong(none, sig);
    return;
  }
  Die(sig);
}

}  // namespace

void RegisterTempPath(const std::string& path) {
  if (path.size() >= kPathMax) return;
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (g_claimed[i].compare_exchange_strong(expected, true)) {
      std::memcpy(g_paths[i].data(), path.c_str(), path.size() + 1);
      g_published[i].store(true, std::memory_order_release);
      return;
    }
  }
}

void UnregisterTempPath(const std::string& path) {
  for (int i = 0; i < kSlots; ++i) {
    if (g_published[i] && path == g_paths[i].data()) {
      g_published[i] = false;
      g_claimed[i] = false;
    }
  }
}

void InstallTempFileCleanup() {
  g_main_thread = ThisThread();
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, OnTerminationSignal);
}

TerminationSignalsHeld::TerminationSignalsHeld() {
  ++g_held;
}

int HeldSignal() {
  return g_pending.load();
}

TerminationSignalsHeld::~TerminationSignalsHeld() {
  if (--g_held == 0)
    if (const int sig = g_pending.exchange(0)) Die(sig);
}

}  // namespace ortc::format
