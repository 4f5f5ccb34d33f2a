// Reads an initializer's type, size and data location, checking that its bytes really exist:
// embedded data of the right length, or external data inside the model's folder, in a file
// long enough to hold it. The bytes themselves are not read (weights may exceed memory).
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>

#include "graph/graph.h"
#include "ortc/status.h"

namespace ortc::graph {

// `base_dir` is the model's folder; nullptr when unknown (a buffer load without a data folder).
Result<Initializer> ReadInitializerInfo(const onnx::TensorProto& tensor,
                                        const std::filesystem::path* base_dir);

// Resolves `location` (as written in a model) under `base_dir`, refusing absolute paths, `..`
// and symlinks that lead outside the folder.
Result<std::filesystem::path> ResolveInsideFolder(const std::filesystem::path& base_dir,
                                                  const std::string& location);

}  // namespace ortc::graph
