// The temporary files a process has in flight, kept where a signal handler can read them, so
// that SIGINT, SIGTERM or SIGHUP removes them before the process dies: no command leaves a
// half-written file behind (a killed SIGKILL writer's files go with the next writer's cleanup).
// And a window in which those signals wait: a compile's publish (several renames that belong
// together) completes before the process dies of one.
#pragma once

#include <string>

namespace ortc::format {

// Adds or removes a path of a temporary file or folder (the handler unlinks every registered
// file, then removes every registered folder left empty). At most 64 at once; a path of 4096
// bytes or more is not registered.
void RegisterTempPath(const std::string& path);
void UnregisterTempPath(const std::string& path);

// Installs the handler for SIGINT, SIGTERM and SIGHUP: remove the registered files, then die of
// the signal as before (exit status 128 + signal). Call it on the thread that writes the files
// (the main thread): a signal that lands on another thread is passed on to that one, so the
// cleanup never runs beside a write in progress.
void InstallTempFileCleanup();

// While one lives, those signals are held: the handler notes the first and returns; at the end
// of the scope, a noted signal removes the registered files and kills the process. Holds across
// every thread of the process (a flag, not a signal mask).
// A long loop under a hold (a benchmark) polls HeldSignal() to stop early and report what it
// has before the hold ends.
class TerminationSignalsHeld {
 public:
  TerminationSignalsHeld();
  ~TerminationSignalsHeld();
  TerminationSignalsHeld(const TerminationSignalsHeld&) = delete;
  TerminationSignalsHeld& operator=(const TerminationSignalsHeld&) = delete;
};

// The signal that arrived during a hold and waits for its end, or 0.
int HeldSignal();

}  // namespace ortc::format
