// Byte counts for people: "21.2 KiB". Used by every text report (partition, compile, inspect).
#pragma once

#include <cstdint>
#include <string>

namespace ortc::tools {

std::string FormatBytes(int64_t bytes);

}  // namespace ortc::tools
