// Builds the EPContext model: the source graph with each compiled group replaced by one
// EPContext node; groups left to the CPU fallback keep their ONNX nodes, and the initializers
// those nodes read go into the ctx model or into one external-initializers file, never a
// reference to the source model's data files.
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "bundle/byte_source.h"
#include "format/ep_context.h"
#include "graph/model.h"
#include "ortc/status.h"
#include "partition/partitioner.h"

namespace ortc::emit {

struct CtxModelInput {
  const graph::Model* model;
  const partition::Partition* partition;
  // Per group (same order as partition->groups): the EPContext node, or nullopt when the
  // group is not compiled and keeps its nodes.
  std::vector<std::optional<format::EpContextNode>> ep_nodes;
  std::string external_initializers_file;  // "" = embed initializers
  // Metadata "ep_compatibility_info.ortc" (format/compatibility_info.h); "" = none.
  std::string compatibility_info;
  // Further metadata (key, value) written over any the source has under the same keys.
  std::vector<std::pair<std::string, std::string>> metadata = {};
};

struct ExternalChunk {
  bundle::ByteSource bytes;
  int64_t offset = 0;  // in the external-initializers file
};

struct CtxModel {
  onnx::ModelProto proto;
  // When external_initializers_file is set: what goes into that file, where (streamed by the
  // caller so large weights are never all in memory).
  std::vector<ExternalChunk> external_chunks;
  int64_t external_bytes = 0;
};

Result<CtxModel> BuildCtxModel(const CtxModelInput& input);

}  // namespace ortc::emit
