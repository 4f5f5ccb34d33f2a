// Turns a ModelProto into an executable graph: initializers and Constant nodes become
// constants, plain ONNX nodes become ops run by the CPU kernels, and every EPContext node is
// gated and replaced by its backend's program (CPU programs are expanded into ops whose
// weights are used in place from the mapped binary).
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>

#include "cpu_kernel/exec_graph.h"
#include "loader/fixed_inputs.h"
#include "ortc/runtime.h"

namespace ortc::loader {

struct LoadedModel {
  exec::ExecGraph graph;
  LoadReport report;
  std::vector<TensorInfo> inputs, outputs;
  std::map<std::string, FixedInput> fixed_inputs;  // --input-value of the compile
};

// `model_dir` is where binaries and external data are looked up; nullptr when unknown (a
// buffer load without context_file_path). With `gate_only`, no program is expanded.
Result<LoadedModel> LoadModel(const onnx::ModelProto& model, const std::filesystem::path* model_dir,
                              const SessionOptions& options, bool gate_only = false);

}  // namespace ortc::loader
