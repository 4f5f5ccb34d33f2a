// Output folders a compile has to make (-o naming a folder that does not exist yet). They are
// made just before the first write and, when the compile fails after that, removed again while
// still empty: a failed compile leaves nothing behind.
#pragma once

#include <filesystem>
#include <vector>

#include "ortc/status.h"

namespace ortc::compile {

class OutputFolders {
 public:
  OutputFolders() = default;
  OutputFolders(const OutputFolders&) = delete;
  OutputFolders& operator=(const OutputFolders&) = delete;
  // Removes the folders Create made, deepest first, unless Keep was called; a folder something
  // was written to stays.
  ~OutputFolders();

  // Notes that `folder` must exist before writing. Fails at once when it cannot be made because
  // a file stands where it or one of its parents would be.
  Status Need(const std::filesystem::path& folder);
  // Makes the noted folders that are missing.
  Status Create();
  // The compile succeeded: the folders stay.
  void Keep() { created_.clear(); }

 private:
  std::vector<std::filesystem::path> needed_, created_;
};

}  // namespace ortc::compile
