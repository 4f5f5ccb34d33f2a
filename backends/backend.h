// The one interface every backend implements. The compiler side answers, per node, whether
// the backend can run it (and why not); later issues add lowering, packing and the runtime side.
// Backends register through the explicit list in registry.cpp, in-tree ones statically.
#pragma once

#include <string>
#include <string_view>

#include "graph/graph.h"

namespace ortc::backends {

struct NodeSupport {
  bool supported = false;
  std::string reason;  // why not, when !supported: "op not supported", "dtype float64", ...

  static NodeSupport Yes() { return {true, {}}; }
  static NodeSupport No(std::string why) { return {false, std::move(why)}; }
};

class Backend {
 public:
  virtual ~Backend() = default;
  // Short name used on the command line and in file names: "cpu", "cuda".
  virtual std::string_view name() const = 0;
  // The EPContext `source` attribute value that marks nodes this backend owns.
  virtual std::string_view ep_source() const = 0;
  // One line saying what the backend can do today (shown by --help and reports).
  virtual std::string_view status_line() const = 0;
  // True for the CPU backend, which must take every node the others leave.
  virtual bool is_fallback() const { return false; }
  virtual NodeSupport Supports(const graph::Graph& g, const graph::Node& node) const = 0;
};

}  // namespace ortc::backends
