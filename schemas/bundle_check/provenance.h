// What a compile records in each ctx model's metadata so CI can tell a fresh bundle from a stale
// one (schemas/bundle_manifest.md), and the checks that read it back: `ortc check --source`
// here, `ortc compile --if-changed` in the compiler.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "ortc/status.h"

namespace ortc::tools {

inline constexpr const char* kSourceDigestKey = "ortc.source_sha256";
inline constexpr const char* kCompileOptionsKey = "ortc.compile_options";
inline constexpr const char* kCompilerKey = "ortc.compiler";

// Hears, as a file is hashed, its name and how many of its bytes are done (seconds per GiB).
using HashProgress =
    std::function<void(const std::filesystem::path& file, int64_t done, int64_t total)>;

// SHA-256 over the model file's bytes followed by those of every external data file it names
// (in order of first mention): a change to weights kept outside the model counts too.
Result<std::string> SourceDigest(const std::filesystem::path& model,
                                 const HashProgress& progress = {});

// The metadata value under key, or "" when the model has none.
std::string MetadataValue(const onnx::ModelProto& model, const std::string& key);

// Why the ctx model at ctx_path is not what compiling `source` (whose SourceDigest is `digest`)
// now would give ("" when it is): the source changed, the options or the compiler differ (when
// given, not ""), nothing was recorded, or a binary beside it is not the one it was written with.
Result<std::string> StaleReason(const std::filesystem::path& ctx_path,
                                const std::filesystem::path& source, const std::string& digest,
                                const std::string& options, const std::string& compiler);

}  // namespace ortc::tools
