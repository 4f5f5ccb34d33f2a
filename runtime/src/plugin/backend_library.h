// Loads a backend plugin library (backends/plugin_abi/ortc_backend_plugin.h) with dlopen,
// checks its ABI version both ways and wraps its function table in ortc::Status calls.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "ortc/status.h"
#include "plugin_abi/ortc_backend_plugin.h"

namespace ortc::plugin {

// Candidate paths for libortc_backend_<name>.so, in search order: each folder of
// ORTC_BACKEND_PATH (':'-separated), the running executable's folder and its ../lib/ortc/backends
// (the installed layout), libortc_runtime's folder and its ortc/backends when it is a shared
// library, then the plain soname (the dynamic loader's search).
std::vector<std::string> CandidatePaths(const std::string& backend);

class BackendLibrary {
 public:
  // Opens one file (or soname) and creates the backend. `host_abi_version` is what the host
  // announces (ORTC_BACKEND_ABI_VERSION; tests pass others).
  static Result<std::shared_ptr<BackendLibrary>> Open(
      const std::string& path, uint32_t host_abi_version = ORTC_BACKEND_ABI_VERSION);
  ~BackendLibrary();
  BackendLibrary(const BackendLibrary&) = delete;
  BackendLibrary& operator=(const BackendLibrary&) = delete;

  const std::string& path() const { return path_; }
  std::string name() const;
  // The device description JSON (never fails for "no device": the JSON says why).
  Result<std::string> DescribeDevice() const;
  // describe_graph / last_run_profile of a loaded graph: the plugin's JSON text.
  Result<std::string> DescribeGraph(OrtcGraph* graph) const;
  Result<std::string> LastRunProfile(OrtcGraph* graph) const;
  // check_binary on a binary's recorded facts: the reason text, *verdict the OrtcBinaryVerdict.
  // Only for a plugin whose table has check_binary.
  Result<std::string> CheckBinary(const OrtcBinaryFacts& facts, int32_t* verdict) const;
  // A Status from a plugin call's result and last_error().
  Status StatusOf(OrtcPluginStatus s, const std::string& what) const;
  OrtcBackend* table() const { return backend_; }

 private:
  BackendLibrary() = default;
  std::string path_;
  void* handle_ = nullptr;
  OrtcBackend* backend_ = nullptr;
  OrtcBackendReleaseFn release_ = nullptr;
};

// The process-wide instance for a backend: searched and loaded on first use, then kept for the
// life of the process (a failure is remembered too, with every attempt and its reason).
Result<std::shared_ptr<BackendLibrary>> GetBackend(const std::string& backend);

}  // namespace ortc::plugin
