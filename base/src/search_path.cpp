// Colon-separated search paths: see search_path.h.
#include "base/search_path.h"

namespace ortc {

std::vector<std::string> SplitSearchPath(const char* list) {
  std::vector<std::string> folders;
  if (!list) return folders;
  const std::string text = list;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(':', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) folders.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return folders;
}

}  // namespace ortc
