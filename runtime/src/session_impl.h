// What a Session holds (private to the runtime): the loaded model, its profiler, and which of
// its inputs and outputs a backend graph alone reads or writes (so they may be device memory).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "exec/profiler.h"
#include "loader/graph_loader.h"
#include "ortc/runtime.h"
#include "plugin/backend_library.h"

namespace ortc {

// An input or output whose only reader (or writer) is one backend graph.
struct DeviceValue {
  std::shared_ptr<plugin::BackendLibrary> library;
  std::string graph;  // the EPContext node
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> shape;  // static: the binary's programs are shape-specialised
};

struct Session::Impl {
  loader::LoadedModel model;
  std::unique_ptr<exec::Profiler> profiler;          // with enable_profiling
  int intra_op_threads = 1;                          // resolved from the options
  std::map<std::string, DeviceValue> device_values;  // by input or output name
};

// Finds the device values of a loaded model and records them in its TensorInfos (device,
// device_graph, and the graph's static shape where the model left it unknown).
std::map<std::string, DeviceValue> FindDeviceValues(loader::LoadedModel* model);

}  // namespace ortc
