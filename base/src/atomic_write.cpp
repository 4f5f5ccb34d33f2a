// WriteFileAtomically: a temporary file beside the final one (format/temp_names.h), then rename.
#include "base/atomic_write.h"

#include <unistd.h>

#include <fstream>
#include <string>

#include "base/temp_names.h"
#include "base/temp_registry.h"

namespace ortc::format {

Status WriteFileAtomically(const std::filesystem::path& path,
                           const std::function<bool(std::ostream&)>& write) {
  const std::filesystem::path temp = TempPathFor(path);
  bool ok = false;
  RegisterTempPath(temp.string());  // a signal while it is written removes it
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    ok = out && write(out);
    out.close();
    ok = ok && !out.fail();
  }
  std::error_code ec;
  if (ok) std::filesystem::rename(temp, path, ec);
  if (!ok || ec) std::filesystem::remove(temp, ec);
  UnregisterTempPath(temp.string());
  if (!ok || ec) {
    return Status(StatusCode::kIoError,
                  "cannot write " + path.string() + " (disk full or not writable?)");
  }
  return Status::Ok();
}

}  // namespace ortc::format
