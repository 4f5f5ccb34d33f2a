#include "base/temp_names.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <random>
#include <string_view>

namespace ortc::format {
namespace {

constexpr std::string_view kTempMarker = ".ortc-tmp-";

// This machine's name as it goes into temporary file names: '-' and '/' would make the name
// ambiguous, so they become '_'.
std::string HostTag() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "unknown";
  std::string tag(name);
  for (char& c : tag) {
    if (c == '-' || c == '/' || c == '.') c = '_';
  }
  return tag;
}

}  // namespace

std::filesystem::path TempPathFor(const std::filesystem::path& final_path) {
  std::random_device rd;
  std::filesystem::path dir = final_path.parent_path();
  if (dir.empty()) dir = ".";
  return dir / ("." + final_path.filename().string() + std::string(kTempMarker) + HostTag() + "-" +
                std::to_string(::getpid()) + "-" + std::to_string(rd()));
}

bool IsTempFileName(const std::string& name) {
  return !name.empty() && name[0] == '.' && name.find(kTempMarker) != std::string::npos;
}

std::vector<std::filesystem::path> RemoveStaleTempFiles(const std::filesystem::path& folder) {
  std::vector<std::filesystem::path> removed;
  std::error_code ec;
  const std::string host = HostTag();
  for (std::filesystem::directory_iterator it(folder.empty() ? "." : folder, ec), end;
       !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!IsTempFileName(name) || !it->is_regular_file(ec)) continue;
    // ...<marker><host>-<pid>-<random>: the host is everything up to the last two fields.
    const std::string tail = name.substr(name.rfind(kTempMarker) + kTempMarker.size());
    const size_t random_dash = tail.rfind('-');
    if (random_dash == std::string::npos || random_dash == 0) continue;
    const size_t pid_dash = tail.rfind('-', random_dash - 1);
    if (pid_dash == std::string::npos || tail.substr(0, pid_dash) != host) continue;
    const std::string pid_text = tail.substr(pid_dash + 1, random_dash - pid_dash - 1);
    if (pid_text.empty() || pid_text.size() > 9 ||
        pid_text.find_first_not_of("0123456789") != std::string::npos)
      continue;
    const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
    // Only a writer that is certainly gone: a live process, or one we may not signal, keeps it.
    if (pid <= 0 || pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
    if (std::filesystem::remove(it->path(), ec)) removed.push_back(it->path());
  }
  return removed;
}

}  // namespace ortc::format
