// Constant bytes from the view or from an external data file (see constant_bytes.h).
#include "constant_bytes.h"

#include <fstream>

namespace npu {

bool ReadConstant(const OrtcValueView& value, uint64_t max_bytes, std::string* bytes,
                  std::string* why) {
  const std::string name = value.name ? value.name : "";
  if (!value.is_constant) {
    *why = "'" + name + "' is not a constant";
    return false;
  }
  if (value.byte_size > max_bytes) {
    *why = "'" + name + "' has " + std::to_string(value.byte_size) + " bytes, expected at most " +
           std::to_string(max_bytes);
    return false;
  }
  const auto size = static_cast<size_t>(value.byte_size);
  if (value.data) {
    bytes->assign(static_cast<const char*>(value.data), size);
    return true;
  }
  if (!value.external_file) {
    if (size == 0) {
      bytes->clear();
      return true;
    }
    *why = "constant '" + name + "' has neither bytes nor an external file";
    return false;
  }
  std::ifstream file(value.external_file, std::ios::binary);
  bytes->assign(size, '\0');
  if (file && file.seekg(static_cast<std::streamoff>(value.external_offset)) &&
      file.read(&(*bytes)[0], static_cast<std::streamsize>(size)))
    return true;
  *why = "cannot read " + std::to_string(size) + " bytes of '" + name + "' at offset " +
         std::to_string(value.external_offset) + " of " + value.external_file;
  return false;
}

}  // namespace npu
