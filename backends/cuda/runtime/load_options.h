// The CUDA plugin's per-session options (OrtcGraphLoadInfo.options), documented in
// backends/README.md: enable_cuda_graph (default 1) and enable_profiling (default 0).
#pragma once

#include "plugin_error.h"

namespace ortc::cuda_rt {

struct LoadOptions {
  bool cuda_graph = true;  // capture the steps once and replay them with one launch per run
  bool profiling = false;  // time every step of every run (runs on the stream, not a graph)
};

// Unknown keys and values other than 0/1 fail with INVALID_ARGUMENT naming the known ones.
OrtcPluginStatus ParseLoadOptions(const OrtcGraphLoadInfo& info, LoadOptions* out);

}  // namespace ortc::cuda_rt
