// The compile side's view of a graph (OrtcGraphView in the plugin ABI), built from the
// compiler's own Graph: plain C arrays a backend built anywhere can read. It points into the
// Graph and its Model wherever their memory already has the ABI's form (names, dims, raw
// weight bytes, attribute lists), so building it copies little; it must not outlive them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/model.h"
#include "plugin_abi/ortc_backend_plugin.h"

namespace ortc::backends::abi {

// The token OrtcGraphView::host_build holds in this build: backends linked into the host
// compare its address (graph_view.cpp's comment says why an address).
const char* HostBuildToken();

class GraphView {
 public:
  // `model` may be null (capability answers only need the graph).
  GraphView(const graph::Graph& g, const graph::Model* model);
  GraphView(const GraphView&) = delete;
  GraphView& operator=(const GraphView&) = delete;

  const OrtcGraphView* view() const { return &view_; }

 private:
  OrtcGraphView view_{};
  std::vector<OrtcNodeView> nodes_;
  std::vector<OrtcValueView> values_;
  std::vector<std::vector<int64_t>> dims_;
  std::vector<std::vector<OrtcAttributeView>> attributes_;
  std::vector<std::vector<const char*>> string_lists_;
  std::vector<std::string> external_files_;
  std::vector<std::shared_ptr<const std::string>> converted_bytes_;  // non-raw initializers
};

// The host's Graph (and Model, in compile) behind a view, for backends linked into the host;
// null when the view was not made by this build.
const graph::Graph* HostGraph(const OrtcGraphView* view);
const graph::Model* HostModel(const OrtcGraphView* view);

}  // namespace ortc::backends::abi
