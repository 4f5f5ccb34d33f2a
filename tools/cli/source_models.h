// Plain ONNX models as the compiler reads them, on the CPU kernels: the CPU runtime has no
// kernel for ONNX Runtime's com.microsoft transformer ops nor for the ai.onnx ops newer than
// ortc's ONNX library (opset 23's Attention, RMSNormalization...), which the compiler rewrites
// into standard ops at load (graph/contrib_ops.h). `run`, `generate` and `verify` open source
// models through this.
#pragma once

#include <filesystem>
#include <memory>

#include "graph/input_shapes.h"
#include "ortc/runtime.h"
#include "ortc/status.h"

namespace ortc::cli {

// A session on `model`: as it is when the CPU kernels run it, else (when loading it rewrites
// some of its ops) on the rewritten model, its external data read from the model's folder.
// `shapes` fixes graph inputs for the rewrite (the expansions read head counts from shapes).
Result<std::unique_ptr<Session>> OpenSourceModel(const std::filesystem::path& model,
                                                 const SessionOptions& options,
                                                 const graph::InputShapes& shapes = {});

}  // namespace ortc::cli
