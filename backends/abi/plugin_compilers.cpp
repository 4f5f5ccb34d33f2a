// dlopen of compile-side plugins. A loaded library stays loaded for the life of the process: the
// backend objects made from it are kept in the registry until exit.
#include "abi/plugin_compilers.h"

#include <dlfcn.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "base/search_path.h"

namespace ortc::backends::abi {
namespace {

std::mutex g_mutex;
std::vector<std::string> g_folders;

// A plugin's diagnostics, in the compiler's log (-v shows info, -vv debug).
void HostLog(void*, int32_t level, const char* message) {
  const char* text = message ? message : "";
  if (level >= 2)
    spdlog::warn("backend plugin: {}", text);
  else if (level == 1)
    spdlog::info("backend plugin: {}", text);
  else
    spdlog::debug("backend plugin: {}", text);
}

}  // namespace

void AddBackendSearchFolder(const std::string& folder) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_folders.push_back(folder);
}

std::vector<std::string> BackendSearchFolders() {
  std::vector<std::string> folders;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    folders = g_folders;
  }
  // --backend-path also extends the variable (for the runtime): each folder once.
  for (const auto& folder : SplitSearchPath(std::getenv("ORTC_BACKEND_PATH")))
    if (std::find(folders.begin(), folders.end(), folder) == folders.end())
      folders.push_back(folder);
  return folders;
}

Result<std::unique_ptr<AbiBackend>> LoadPluginCompiler(const std::string& name) {
  const std::string file = "libortc_backend_" + name + ".so";
  std::string tried;
  for (const auto& folder : BackendSearchFolders()) {
    const std::string path = (std::filesystem::path(folder) / file).string();
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      tried += "\n  " + path + ": no such file";
      continue;
    }
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = ::dlerror();
      tried += "\n  " + path + ": " + (why ? why : "dlopen failed");
      continue;
    }
    auto create = reinterpret_cast<OrtcBackendCompilerCreateFn>(
        ::dlsym(handle, ORTC_BACKEND_COMPILER_CREATE_SYMBOL));
    if (!create) {
      tried += "\n  " + path +
               ": exports no " ORTC_BACKEND_COMPILER_CREATE_SYMBOL
               " (a runtime-only backend library: it cannot compile)";
      continue;
    }
    const OrtcHostApi host{ORTC_BACKEND_ABI_VERSION, sizeof(OrtcHostApi), nullptr, &HostLog};
    OrtcBackendCompiler* table = nullptr;
    const OrtcPluginStatus s = create(ORTC_BACKEND_ABI_VERSION, &host, &table);
    if (s == ORTC_PLUGIN_ABI_MISMATCH) {
      return InvalidArgument(path + " refuses plugin ABI version " +
                             std::to_string(ORTC_BACKEND_ABI_VERSION) +
                             " (this ortc's); rebuild it against this ortc's installed headers");
    }
    if (s != ORTC_PLUGIN_OK || !table) {
      return InvalidArgument(path + ": " ORTC_BACKEND_COMPILER_CREATE_SYMBOL " failed (status " +
                             std::to_string(s) + ")");
    }
    ORTC_RETURN_IF_ERROR(CheckCompilerTable(table, path));
    if (std::string(table->name) != name) {
      return InvalidArgument(path + " is backend '" + table->name + "', not '" + name + "'");
    }
    return std::make_unique<AbiBackend>(table, nullptr);
  }
  if (tried.empty()) tried = "\n  (no folder to search: name one with --backend-path DIR)";
  return InvalidArgument("no backend library " + file + " found; searched:" + tried);
}

}  // namespace ortc::backends::abi
