// `--input-shape name=1x3x224x224`: fixes a graph input's symbolic dimensions before shape
// inference, so backends that specialize kernels to static shapes (CUDA) can take the graph.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ortc/status.h"

namespace ortc::graph {

using InputShapes = std::map<std::string, std::vector<int64_t>>;

// Parses "name=1x3x224x224" (dims >= 1, separated by 'x') into `out`, or a comma-separated
// list of them ("ids=1x128,mask=1x128"; a comma is part of a name unless every piece has an
// '='); a name given twice is an error.
Status ParseInputShape(const std::string& text, InputShapes* out);

// Rewrites the named graph inputs' declared shapes. Errors: an unknown input name (listing the
// inputs), a rank that differs from the model's, a dim that contradicts a fixed dim. With
// `applied` (models of a weight-sharing group, whose inputs differ), names the model does not
// have are skipped and the ones it has are added to `applied`.
Status ApplyInputShapes(const InputShapes& shapes, onnx::GraphProto* graph,
                        std::set<std::string>* applied = nullptr);

}  // namespace ortc::graph
