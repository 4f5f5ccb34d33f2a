// The host's side of the plugin ABI, as the tests drive it: ask which nodes the compile side
// takes, compile a group while recording everything it reports, load the program with its
// weights, run it, and compare its outputs with the reference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <ortc/ortc_backend_plugin.h>

#include "graph_builder.h"

namespace npu_test {

// ---------------------------------------------------------------------------------------------
// The compile side: sinks that record what the plugin reports.

struct Capability {
  std::vector<int> answers;  // per node: how many answers it got
  std::vector<bool> claimed;
  std::map<uint32_t, std::string> reasons;
};

// Asks get_capability about every node of `g`; checks each node got exactly one answer.
Capability AskCapability(OrtcBackendCompiler* compiler, const GraphBuilder& g);

struct TensorDesc {
  std::string name;
  int32_t dtype;
  std::vector<int64_t> dims;
};

struct Weight {
  TensorDesc desc;
  std::string layout;
  uint32_t alignment;
  int32_t kind;
  std::string bytes;
};

struct Compiled {
  std::string program;
  std::vector<TensorDesc> inputs, outputs;
  std::vector<Weight> weights;
  std::map<std::string, int64_t> stats;
  std::map<std::string, std::string> notes, versions;
  std::vector<std::pair<int32_t, int32_t>> progress;
};

// Compiles the group `nodes` (with its boundary `inputs` and `outputs`) into `out`.
OrtcPluginStatus Compile(OrtcBackendCompiler* compiler, const GraphBuilder& g,
                         std::vector<int32_t> nodes, std::vector<int32_t> inputs,
                         std::vector<int32_t> outputs, Compiled* out);

// ---------------------------------------------------------------------------------------------
// The runtime side, as the host drives it.

// Loads `c` (or `program` in its place), passing the first `num_weights` of its weights.
OrtcPluginStatus Load(OrtcBackend* b, const Compiled& c, OrtcGraph** graph,
                      const std::string* program = nullptr, size_t num_weights = SIZE_MAX);

OrtcTensorRef Ref(const TensorDesc& d, void* data);

// Runs a loaded graph of one input and one output (both 8-bit).
OrtcPluginStatus RunOne(OrtcBackend* b, OrtcGraph* graph, const Compiled& c,
                        const std::string& input, std::string* output);

// Compares plugin and reference: within one step of the output's quantization everywhere, and
// the outputs are not trivially constant.
void CompareOutputs(const char* what, const std::vector<int32_t>& got,
                    const std::vector<int32_t>& want);

}  // namespace npu_test
