// Writing bundles (`ortc compile --bundle DIR`): the ctx models, their binaries and external data
// in one folder with manifest.json, which lists every file with its size and sha256, the
// compile options, the sources' digests and the tool versions (schemas/bundle_manifest.md).
// Reading them back is schemas/bundle_check/bundle_verify.h's, which `ortc check DIR` uses.
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

// Writes dir/manifest.json (atomically) for the models of `report` (a compile with `options`
// into dir, or one --if-changed found up to date): each ctx model, the binaries and external
// data file it references, and each source's digest. `tools` names the tool versions to record.
Status WriteBundleManifest(const std::filesystem::path& dir, const CompileReport& report,
                           const CompileOptions& options, const nlohmann::json& tools);

}  // namespace ortc::compile
