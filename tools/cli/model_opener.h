// How `run` and `generate` open a model file. The runtime-only ortc-run opens it as it is;
// `ortc` installs an opener (cli/source_models.h) that also runs plain ONNX models whose ops the
// CPU kernels do not run but the compiler rewrites at load: ONNX Runtime's com.microsoft
// transformer ops and ai.onnx ops newer than its ONNX library (opset 23's Attention...).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>

#include "ortc/runtime.h"
#include "ortc/status.h"

namespace ortc::cli {

using ModelOpener = std::function<Result<std::unique_ptr<Session>>(const std::filesystem::path&,
                                                                   const SessionOptions&)>;

// Replaces the opener (the default is Session::Create).
void SetModelOpener(ModelOpener opener);

Result<std::unique_ptr<Session>> OpenModel(const std::filesystem::path& model,
                                           const SessionOptions& options);

}  // namespace ortc::cli
