// `ortc check DIR`: a bundle folder verified as a unit against its manifest.json
// (schemas/bundle_manifest.md), which `ortc compile --bundle DIR` writes.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <vector>

#include "ortc/status.h"

namespace ortc::tools {

inline constexpr int kBundleManifestSchemaVersion = 1;
inline constexpr const char* kBundleManifestName = "manifest.json";

struct BundleCheck {
  nlohmann::json manifest;
  std::vector<std::filesystem::path> ctx_models;  // to gate next
};

// Reads dir/manifest.json and checks every file it lists: present (NO_SUCHFILE), inside dir,
// with the recorded size and sha256 (INVALID_GRAPH naming the file otherwise).
Result<BundleCheck> VerifyBundle(const std::filesystem::path& dir);

}  // namespace ortc::tools
