// The CUDA plugin's per-session options (OrtcGraphLoadInfo.options), documented in
// backends/README.md: enable_cuda_graph (default 1), enable_profiling (default 0) and
// host_copy_threads (default: half the cores, at most 8).
#pragma once

#include "plugin_error.h"

namespace ortc::cuda_rt {

struct LoadOptions {
  bool cuda_graph = true;          // capture the steps once and replay them with one launch per run
  bool profiling = false;          // time every step of every run (runs on the stream, not a graph)
  unsigned host_copy_threads = 0;  // threads copying large host tensors (0: the default)
};

// Unknown keys, flags other than 0/1 and thread counts outside 1..64 fail with INVALID_ARGUMENT
// naming the known keys or the accepted values.
OrtcPluginStatus ParseLoadOptions(const OrtcGraphLoadInfo& info, LoadOptions* out);

}  // namespace ortc::cuda_rt
