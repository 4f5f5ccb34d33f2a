// ONNX Runtime's compile path with the ortc EP: which nodes ortc claims (its partitioner), and
// the compile of the claimed groups (its backends, through compile::Compile), so that ONNX
// Runtime's compile API writes a ctx model and binaries like `ortc compile` does.
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <string>
#include <vector>

#include "backend.h"
#include "format/ep_context.h"
#include "ortc/status.h"

namespace ortc::ort_ep {

struct CompileSettings {
  std::vector<std::string> backends = {"cpu"};  // ep.ortc.backends, in priority order
  int embed_mode = 0;
  // Where ONNX Runtime writes the ctx model; binaries go beside it as <base>_<backend>.bin.
  // Empty when no EPContext model is written (the session compiles for itself): the binaries
  // then live in a temporary folder, removed once the sessions have mapped them.
  std::filesystem::path ctx_model_path;
  std::string node_name_prefix;  // ep.context_node_name_prefix
};

// The backends named in ep.ortc.backends, in order; fails on an unknown one or one that cannot
// compile in this build.
Result<std::vector<const backends::Backend*>> BackendOrder(const std::vector<std::string>& names);

// The groups ortc's partitioner forms on `model` (a proto from GraphToModelProto, node i =
// ONNX Runtime's node i), as node indices. Groups holding a node ortc made up while loading
// (an expanded com.microsoft op) are left to ONNX Runtime.
Result<std::vector<std::vector<size_t>>> ChooseGroups(const onnx::ModelProto& model,
                                                      const CompileSettings& settings);

struct CompiledParts {
  // Per part: the EPContext node ONNX Runtime writes (main_context 1 on the first node of each
  // backend, whose ep_cache_context names the binary or holds it), and a one-node model an ortc
  // Session can load from `binary_dir`.
  std::vector<format::EpContextNode> nodes;
  std::vector<onnx::ModelProto> session_models;
  std::filesystem::path binary_dir;
  std::vector<std::filesystem::path> written;  // binaries placed beside the ctx model
  std::filesystem::path temp_dir;              // remove once sessions are loaded (may be empty)
  std::string compatibility_info;              // what ortc's compile wrote into its ctx models
};

// Compiles each part (a group's subgraph as its own model) with ortc's backends, together as
// a weight-sharing group: one binary per backend, each distinct weight once.
Result<CompiledParts> CompileParts(const std::vector<onnx::ModelProto>& parts,
                                   const CompileSettings& settings);

// The model an ortc Session loads to run one EPContext node: the node, typed inputs and outputs.
onnx::ModelProto SingleNodeModel(const format::EpContextNode& node, const onnx::GraphProto& types,
                                 const onnx::ModelProto& opsets_from);

}  // namespace ortc::ort_ep
