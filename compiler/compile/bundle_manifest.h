// Writing bundles (`ortc compile --bundle DIR`): the ctx models, their binaries and external data
// in one folder with manifest.json, which lists every file with its size and sha256, the
// compile options, the sources' digests and the tool versions (schemas/bundle_manifest.md).
// Reading them back is the runtime tools' (bundle_check/bundle_verify.h).
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "bundle_check/bundle_verify.h"
#include "compile/compile_driver.h"
#include "ortc/status.h"

namespace ortc::compile {

using tools::kBundleManifestName;
using tools::kBundleManifestSchemaVersion;

// Writes dir/manifest.json (atomically) for the ctx models a compile with `options` wrote there:
// each ctx model, the binaries and external data file it references. `tools` names the tool
// versions to record (e.g. "ortc", "oneDNN").
Status WriteBundleManifest(const std::filesystem::path& dir,
                           const std::vector<std::filesystem::path>& ctx_models,
                           const CompileOptions& options, const nlohmann::json& tools);

}  // namespace ortc::compile
