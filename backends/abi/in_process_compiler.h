// Publishes a backend written against the C++ interface (backend.h) as the plugin ABI's
// compile-side table, so the in-tree CPU and CUDA backends reach the compiler through the same
// C functions an out-of-tree backend exports: capability, identity, options and compile, with
// every result passed back through the ABI's sinks. Being linked into the host, they read the
// host's own Graph and Model behind the view (OrtcGraphView::host_graph) instead of its arrays.
#pragma once

#include "backend.h"
#include "plugin_abi/ortc_backend_plugin.h"

namespace ortc::backends::abi {

// A table calling `impl`, which must outlive it (the in-tree backends are static objects).
OrtcBackendCompiler* InProcessCompiler(const Backend& impl);

}  // namespace ortc::backends::abi
