#include "base/path_inside.h"

#include <algorithm>
#include <system_error>

namespace ortc::format {

namespace fs = std::filesystem;

Result<fs::path> ResolveInside(const fs::path& dir, const std::string& rel_text,
                               const std::string& subject) {
  std::string shown = rel_text;  // a NUL printed raw would cut the message where it is read
  for (size_t at = shown.find('\0'); at != std::string::npos; at = shown.find('\0', at + 2))
    shown.replace(at, 1, "\\0");
  const std::string quoted = subject + " '" + shown + "'";
  // A NUL would cut the path where the file system reads it: another file than the one named.
  if (rel_text.find('\0') != std::string::npos)
    return InvalidGraph(quoted + " contains a NUL byte");
  const fs::path rel(rel_text);
  for (const auto& part : rel)
    if (part == "..") return InvalidGraph(quoted + " leaves the model's folder");
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(dir.empty() ? fs::path(".") : dir, ec);
  if (ec) return IoError(quoted + ": cannot resolve the model's folder: " + ec.message());
  const fs::path full = fs::weakly_canonical(base / rel, ec);
  if (ec == std::errc::too_many_symbolic_link_levels)
    return IoError(quoted +
                   " is a symbolic link loop (or a chain of more links than the system "
                   "follows); point it at the file");
  if (ec) return IoError(quoted + " cannot be resolved: " + ec.message());
  auto [bi, fi] = std::mismatch(base.begin(), base.end(), full.begin(), full.end());
  if (bi != base.end()) return InvalidGraph(quoted + " resolves outside the model's folder");
  return full;
}

}  // namespace ortc::format
