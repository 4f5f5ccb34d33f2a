// Compile-side backend plugins: libortc_backend_<name>.so libraries exporting
// ortc_backend_compiler_create, found in the folders --backend-path names (in order), then in
// ORTC_BACKEND_PATH's (':'-separated), the folders the runtime searches for the same library.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "abi/abi_backend.h"
#include "ortc/status.h"

namespace ortc::backends::abi {

// Adds a folder to search before ORTC_BACKEND_PATH's (ortc --backend-path).
void AddBackendSearchFolder(const std::string& folder);
std::vector<std::string> BackendSearchFolders();

// Loads backend `name` from the first folder that has its library; the error lists every
// folder tried and why each failed.
Result<std::unique_ptr<AbiBackend>> LoadPluginCompiler(const std::string& name);

}  // namespace ortc::backends::abi
