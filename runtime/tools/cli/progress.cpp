// Terminal progress line, redrawn at most ten times a second.
#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "partition/partition_report.h"

namespace ortc::cli {

bool InteractiveTerminal() {
  return ::isatty(STDERR_FILENO) && std::getenv("CI") == nullptr;
}

Progress::Progress(bool enabled) : enabled_(enabled) {}
Progress::~Progress() {
  Finish();
}

void Progress::Update(const std::string& phase, int64_t done, int64_t total) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_ < std::chrono::milliseconds(100) && done < total) return;
  last_ = now;
  std::string line = phase;
  if (total > 1) {
    line += "  " + partition::FormatBytes(done) + " / " + partition::FormatBytes(total) + " (" +
            std::to_string(total ? done * 100 / total : 100) + "%)";
  }
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::Finish() {
  if (enabled_ && drawn_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    drawn_ = false;
  }
}

}  // namespace ortc::cli
