// The exec node that runs a whole graph loaded by a backend plugin: host tensors in, host
// tensors out, one run_graph call (the plugin copies to and from its device).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cpu_kernel/exec_graph.h"
#include "plugin/backend_library.h"

namespace ortc::exec {

struct PluginTensorSpec {
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> dims;  // static: the plugin's programs are shape-specialised
};

// ExecOp::state of a plugin node.
struct PluginGraphState {
  std::string graph_name;
  std::shared_ptr<plugin::BackendLibrary> library;
  std::shared_ptr<OrtcGraph> graph;  // released through the plugin
  std::vector<PluginTensorSpec> inputs, outputs;
  bool profiling = false;  // loaded with enable_profiling: each run's step profile is collected
};

Status RunPluginGraph(KernelContext& ctx);

}  // namespace ortc::exec
