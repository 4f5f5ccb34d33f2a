// Bundles for shipping and CI (`ortc compile --bundle DIR`, `ortc check DIR`): the ctx models,
// their binaries and external data in one folder with manifest.json, which lists every file
// with its size and sha256, the compile options, the sources' digests and the tool versions
// (schemas/bundle_manifest.md). `ortc check DIR` verifies the folder as a unit.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "compile/compile_driver.h"
#include "ortc/status.h"

namespace ortc::compile {

inline constexpr int kBundleManifestSchemaVersion = 1;
inline constexpr const char* kBundleManifestName = "manifest.json";

// Writes dir/manifest.json (atomically) for the ctx models a compile with `options` wrote there:
// each ctx model, the binaries and external data file it references. `tools` names the tool
// versions to record (e.g. "ortc", "oneDNN").
Status WriteBundleManifest(const std::filesystem::path& dir,
                           const std::vector<std::filesystem::path>& ctx_models,
                           const CompileOptions& options, const nlohmann::json& tools);

struct BundleCheck {
  nlohmann::json manifest;
  std::vector<std::filesystem::path> ctx_models;  // to gate next
};

// Reads dir/manifest.json and checks every file it lists: present (NO_SUCHFILE), with the
// recorded size and sha256 (INVALID_GRAPH naming the file otherwise).
Result<BundleCheck> VerifyBundle(const std::filesystem::path& dir);

}  // namespace ortc::compile
