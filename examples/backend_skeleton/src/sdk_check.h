// The version gate's rule for npu binaries: whether a program compiled with one NPU SDK runs on
// a machine with another. Kept apart from the table code so the rule reads in one place.
#pragma once

#include <cstdint>
#include <string>

namespace npu {

// The SDK version of this machine: sdk_version.h's, unless ORTC_NPU_SIM_SDK_VERSION overrides.
std::string RuntimeSdkVersion();

struct SdkVerdict {
  int32_t verdict;     // OrtcBinaryVerdict
  std::string reason;  // empty when OPTIMAL
};

// Same major and minor: OPTIMAL. Binary minor older: runs, PREFER_RECOMPILATION. Otherwise
// (other major, newer minor, no or unreadable version): UNSUPPORTED. `binary` may be NULL.
SdkVerdict CheckSdk(const char* binary, const std::string& runtime);

}  // namespace npu
