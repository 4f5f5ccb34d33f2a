// SplitSearchPath: the folders of a colon-separated list, as ORTC_BACKEND_PATH is read by the
// compiler's plugin loader and the runtime's alike.
#include <catch2/catch.hpp>

#include "base/search_path.h"

using ortc::SplitSearchPath;
using V = std::vector<std::string>;

TEST_CASE("search paths: folders in order, empty entries dropped, repeats kept") {
  CHECK(SplitSearchPath(nullptr).empty());
  CHECK(SplitSearchPath("").empty());
  CHECK(SplitSearchPath(":::").empty());
  CHECK(SplitSearchPath("/opt/npu") == V{"/opt/npu"});
  CHECK(SplitSearchPath("a::b:") == V{"a", "b"});
  CHECK(SplitSearchPath(":/x/y:rel/dir") == V{"/x/y", "rel/dir"});
  CHECK(SplitSearchPath("a:a") == V{"a", "a"});
  CHECK(SplitSearchPath("dir with space:d2") == V{"dir with space", "d2"});
}
