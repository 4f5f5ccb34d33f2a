// A loaded ONNX model: the protos (owned), where it came from, and its in-memory Graph.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/input_shapes.h"
#include "graph/input_values.h"
#include "ortc/status.h"

namespace ortc::graph {

struct Model {
  onnx::ModelProto proto;          // nodes re-ordered topologically; otherwise as read
  std::string display_name;        // the file path, or the name given for a buffer
  std::filesystem::path base_dir;  // folder that external data paths are relative to
  int64_t ir_version = 0;
  std::map<std::string, int64_t> opsets;       // domain ("" = ai.onnx) -> version
  std::set<std::string> applied_input_shapes;  // --input-shape names this model has
  std::set<std::string> applied_input_values;  // --input-value names this model has
  // Inputs --input-value turned into initializers; the ctx model declares them again.
  std::vector<FixedInput> fixed_inputs;
  Graph graph;
  std::vector<std::string> warnings;  // non-fatal findings (e.g. shape inference gave up)
  // Nodes that shape folding (LoadOptions::fold_shapes) replaced by initializers, in order.
  struct FoldedNode {
    std::string name, op_type;
  };
  std::vector<FoldedNode> folded_nodes;
  // Nodes rewritten into older standard ops at load (graph/contrib_ops.h), in the order they
  // were expanded: com.microsoft transformer ops, and ai.onnx ops newer than the ONNX library
  // (opset 23's Attention...). `domain` is "com.microsoft" or "ai.onnx".
  struct ExpandedNode {
    std::string name, op_type, domain;
  };
  std::vector<ExpandedNode> expanded_nodes;

  int64_t default_opset() const;
};

struct LoadOptions {
  // Folder for external data when loading from a buffer (like ONNX Runtime's
  // session.model_external_initializers_file_folder_path). Ignored for file loads.
  std::filesystem::path external_data_dir;
  bool infer_shapes = true;
  // Fixed shapes for graph inputs (--input-shape), applied before shape inference.
  InputShapes input_shapes;
  // Fixed values for scalar graph inputs (--input-value), applied before shape inference.
  InputValues input_values;
  // Set for the models of a group: input_shapes may name inputs of other models; the names this
  // model has are recorded in Model::applied_input_shapes.
  bool input_shapes_of_group = false;
  // After shape inference, fold shape computations (graph/shape_folding.h) and infer again,
  // until nothing more folds. Partition and compile turn it on.
  bool fold_shapes = false;
  // After shape inference, these outputs keep only their last position (graph/last_position.h:
  // --last-token-logits); shapes are inferred again.
  std::vector<std::string> last_position_outputs;
};

Result<std::unique_ptr<Model>> LoadModelFromFile(const std::filesystem::path& path,
                                                 const LoadOptions& options = {});
Result<std::unique_ptr<Model>> LoadModelFromBuffer(std::span<const std::byte> bytes,
                                                   const std::string& display_name,
                                                   const LoadOptions& options = {});

}  // namespace ortc::graph
