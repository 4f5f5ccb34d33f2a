// What a compile records in each ctx model's metadata so CI can tell a fresh bundle from a stale
// one: the source model's digest, the options that decide the outputs, and the compiler. Read
// back by `ortc compile --if-changed` and `ortc check --source`.
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <string>

#include "compile/compile_driver.h"
#include "ortc/status.h"

namespace ortc::compile {

inline constexpr const char* kSourceDigestKey = "ortc.source_sha256";
inline constexpr const char* kCompileOptionsKey = "ortc.compile_options";
inline constexpr const char* kCompilerKey = "ortc.compiler";

// SHA-256 over the model file's bytes followed by those of every external data file it names
// (in order of first mention): a change to weights kept outside the model counts too.
Result<std::string> SourceDigest(const std::filesystem::path& model);

// The options that decide a compile's outputs, as canonical JSON (keys sorted; progress, output
// paths and checks that only refuse are left out). `group` names the models compiled together.
std::string CompileOptionsJson(const CompileOptions& o);

// The metadata value under key, or "" when the model has none.
std::string MetadataValue(const onnx::ModelProto& model, const std::string& key);

// Why the ctx model at ctx_path is not what compiling `source` with `options` now would give
// ("" when it is): the source changed, the options or the compiler differ, or nothing recorded.
Result<std::string> StaleReason(const std::filesystem::path& ctx_path,
                                const std::filesystem::path& source, const std::string& options,
                                const std::string& compiler);

}  // namespace ortc::compile
