// Runs a ctx model compiled with --ep cuda,cpu on the host: CUDA EPContext nodes through the
// emulator's ProgramInterpreter, every other node through the CPU runtime, stage by stage.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "ortc/status.h"
#include "ortc/tensor.h"

namespace ortc::test::cuda {

struct CtxRunInfo {
  int cuda_nodes = 0;   // CUDA EPContext nodes
  int other_nodes = 0;  // CPU EPContext nodes and plain ONNX nodes
  int cpu_stages = 0;   // CPU runtime sessions the run needed
};

// Counts the ctx model's nodes without running anything.
Result<CtxRunInfo> InspectCtxModel(const std::filesystem::path& ctx);

// Runs the ctx model on `feeds` (by input name); returns the graph outputs in order. The model
// is cut at the CUDA nodes: each maximal set of ready CPU nodes becomes one CPU runtime session
// (a copy of the ctx model holding just those nodes, its inputs the values computed so far),
// each ready CUDA node runs in the interpreter, until every node has run.
Result<std::vector<Tensor>> RunCtxModel(const std::filesystem::path& ctx,
                                        const std::vector<std::pair<std::string, Tensor>>& feeds,
                                        CtxRunInfo* info);

}  // namespace ortc::test::cuda
