// Shared records of the --json reports: see report_json.h.
#include "base/report_json.h"

#include <cmath>
#include <cstdio>

namespace ortc::tools {

namespace fs = std::filesystem;

std::string AbsolutePath(const fs::path& path) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  if (ec) return path.lexically_normal().string();
  const fs::path resolved = fs::weakly_canonical(absolute, ec);
  return (ec ? absolute.lexically_normal() : resolved).string();
}

nlohmann::json FileJson(const fs::path& as_given) {
  return {{"path", as_given.string()}, {"absolute_path", AbsolutePath(as_given)}};
}

nlohmann::json EmbeddedFileJson() {
  return {{"path", nullptr}, {"absolute_path", nullptr}, {"embedded", true}};
}

double RoundMs(double ms) {
  return std::round(ms * 1e3) / 1e3;
}

std::string FormatMs(double ms) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3f", RoundMs(ms));
  return text;
}

}  // namespace ortc::tools
