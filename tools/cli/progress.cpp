// Terminal progress line: a new phase at once, its counts at most ten times a second.
#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "base/format_bytes.h"

namespace ortc::cli {

bool InteractiveTerminal() {
  return ::isatty(STDERR_FILENO) && std::getenv("CI") == nullptr;
}

Progress::Progress(bool enabled) : enabled_(enabled) {}
Progress::~Progress() {
  Finish();
}

void Progress::Update(const std::string& phase, int64_t done, int64_t total, Unit unit) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  // Counts are redrawn at most ten times a second; a new phase and the last count always show,
  // so the line never names a phase that is over.
  if (drawn_ && phase == phase_ && now - last_ < std::chrono::milliseconds(100) && done < total)
    return;
  last_ = now;
  phase_ = phase;
  std::string line = phase;
  if (unit == Unit::kRuns) {
    line += "  " + std::to_string(done) + " / " + std::to_string(total) + " runs";
  } else if (total > 1) {
    line += "  " + tools::FormatBytes(done) + " / " + tools::FormatBytes(total) + " (" +
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
