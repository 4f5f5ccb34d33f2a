// A search path as the environment writes one (ORTC_BACKEND_PATH="dir1:dir2"): its folders in
// order. The compiler and the runtime both look for backend plugins along it, and must read it
// alike.
#pragma once

#include <string>
#include <vector>

namespace ortc {

// The non-empty entries of a colon-separated list, in order ("a::b:" gives a, b; nullptr and ""
// give none). Repeated entries are kept: the caller decides whether a folder counts twice.
std::vector<std::string> SplitSearchPath(const char* list);

}  // namespace ortc
