// The npu SDK compatibility rule (see sdk_check.h). Versions are "major.minor" with an optional
// ".patch" that does not matter: a patch release changes neither the program format nor the
// device code it produces.
#include "sdk_check.h"

#include <cstdlib>

#include <ortc/ortc_backend_plugin.h>

#include "sdk_version.h"

namespace npu {
namespace {

struct Version {
  long major = 0;
  long minor = 0;
};

// Reads the digits at text[*pos...] into *out; false when there are none or too many.
bool ReadNumber(const std::string& text, size_t* pos, long* out) {
  const size_t start = *pos;
  long value = 0;
  while (*pos < text.size() && text[*pos] >= '0' && text[*pos] <= '9') {
    if (*pos - start >= 9) return false;
    value = value * 10 + (text[*pos] - '0');
    ++*pos;
  }
  *out = value;
  return *pos > start;
}

// "1", "1.2" or "1.2.3"; false for anything else.
bool ParseVersion(const std::string& text, Version* out) {
  size_t pos = 0;
  long patch = 0;
  if (!ReadNumber(text, &pos, &out->major)) return false;
  out->minor = 0;
  if (pos == text.size()) return true;
  if (text[pos++] != '.' || !ReadNumber(text, &pos, &out->minor)) return false;
  if (pos == text.size()) return true;
  if (text[pos++] != '.' || !ReadNumber(text, &pos, &patch)) return false;
  return pos == text.size();
}

}  // namespace

std::string RuntimeSdkVersion() {
  const char* simulated = std::getenv(kSdkVersionEnv);
  return simulated && *simulated ? simulated : kSdkVersion;
}

SdkVerdict CheckSdk(const char* binary, const std::string& runtime) {
  if (!binary) return {ORTC_BINARY_UNSUPPORTED, "the binary records no npu_sdk version; recompile"};
  const std::string compiled = binary;
  Version b, r;
  if (!ParseVersion(compiled, &b))
    return {ORTC_BINARY_UNSUPPORTED,
            "the binary records npu_sdk '" + compiled + "', which is not a version; recompile"};
  if (!ParseVersion(runtime, &r))
    return {ORTC_BINARY_UNSUPPORTED, "this machine's NPU SDK version '" + runtime + "' (" +
                                         kSdkVersionEnv + ") is not a version"};
  const std::string sides =
      "compiled with NPU SDK " + compiled + ", this machine has NPU SDK " + runtime;
  if (b.major != r.major || b.minor > r.minor)
    return {ORTC_BINARY_UNSUPPORTED,
            sides + ": recompile with SDK " + runtime + " or update the device's SDK"};
  if (b.minor < r.minor) return {ORTC_BINARY_PREFER_RECOMPILATION, sides + ": recompile to use it"};
  return {ORTC_BINARY_OPTIMAL, ""};
}

}  // namespace npu
