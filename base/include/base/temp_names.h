// Names of temporary files: ".<name>.ortc-tmp-<host>-<pid>-<random>" beside the final file, so
// that a temporary file never looks like a valid output, and the next writer into a folder can
// tell one left by a dead process of this host (killed with SIGKILL, a crash) and remove it.
// Every writer of ortc uses them: the compiler's outputs, run's tensors, profiles and reports.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace ortc::format {

// A fresh temporary path for `final_path`, in its folder.
std::filesystem::path TempPathFor(const std::filesystem::path& final_path);

// Whether a file name is one of those temporary files.
bool IsTempFileName(const std::string& name);

// Deletes the temporary files in `folder` left by writers of this host that no longer run. Files
// of live processes and of other hosts (a shared network folder) are left alone. Returns the
// paths removed.
std::vector<std::filesystem::path> RemoveStaleTempFiles(const std::filesystem::path& folder);

}  // namespace ortc::format
