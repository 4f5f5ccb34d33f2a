#include "compile/output_folders.h"

namespace ortc::compile {

namespace fs = std::filesystem;

OutputFolders::~OutputFolders() {
  std::error_code ec;
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) fs::remove(*it, ec);
}

Status OutputFolders::Need(const fs::path& folder) {
  if (folder.empty()) return Status::Ok();
  std::error_code ec;
  for (fs::path p = folder; !p.empty(); p = p.parent_path()) {
    const auto st = fs::status(p, ec);
    if (fs::is_directory(st)) break;
    if (fs::exists(st))
      return InvalidArgument("cannot make the output folder " + folder.string() + ": " +
                             p.string() + " is a file");
    if (p == p.parent_path()) break;
  }
  needed_.push_back(folder);
  return Status::Ok();
}

Status OutputFolders::Create() {
  for (const auto& folder : needed_) {
    // The missing ancestors, outermost first, so they can be removed innermost first.
    std::vector<fs::path> missing;
    std::error_code ec;
    for (fs::path p = folder; !p.empty() && !fs::is_directory(p, ec); p = p.parent_path()) {
      missing.insert(missing.begin(), p);
      if (p == p.parent_path()) break;
    }
    for (const auto& p : missing) {
      if (!fs::create_directory(p, ec) && ec)
        return IoError("cannot make the output folder " + p.string() + ": " + ec.message());
      created_.push_back(p);
    }
  }
  return Status::Ok();
}

}  // namespace ortc::compile
