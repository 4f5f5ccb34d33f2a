// Plugin search, dlopen, the two-way ABI check, and Status mapping of plugin calls.
#include "plugin/backend_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <mutex>

#include "base/search_path.h"
#include "plugin_abi/plugin_text.h"

namespace ortc::plugin {
namespace {

std::string DlError() {
  const char* e = dlerror();
  return e ? e : "unknown error";
}

// A function of this library, to find where libortc_runtime lives when it is shared.
void Anchor() {}

}  // namespace

std::vector<std::string> CandidatePaths(const std::string& backend) {
  const std::string file = "libortc_backend_" + backend + ".so";
  std::vector<std::string> out;
  auto add = [&](const std::filesystem::path& dir) {
    if (dir.empty()) return;
    const std::string p = (dir / file).string();
    for (const auto& o : out)
      if (o == p) return;
    out.push_back(p);
  };
  for (const auto& dir : SplitSearchPath(std::getenv("ORTC_BACKEND_PATH"))) add(dir);
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  // Beside the executable, then the installed layout (bin/ and lib/ortc/backends/).
  if (!ec) {
    add(exe.parent_path());
    add(exe.parent_path().parent_path() / "lib" / "ortc" / "backends");
  }
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&Anchor), &info) && info.dli_fname) {
    // The shared library holding the runtime (libortc_runtime, or ONNX Runtime's plugin EP
    // libortc_ort_ep): its folder. For a static runtime this is the executable's, already listed.
    // Relative names (an executable started by a relative path) would search the working folder.
    const std::filesystem::path lib(info.dli_fname);
    if (lib.is_absolute()) {
      add(lib.parent_path());
      add(lib.parent_path() / "ortc" / "backends");  // the installed layout (lib/ortc/backends/)
    }
  }
  out.push_back(file);
  return out;
}

Result<std::shared_ptr<BackendLibrary>> BackendLibrary::Open(const std::string& path,
                                                             uint32_t host_abi_version) {
  std::shared_ptr<BackendLibrary> lib(new BackendLibrary());
  lib->path_ = path;
  // RTLD_LOCAL: the plugin's vendor libraries never leak symbols into the runtime.
  lib->handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib->handle_) {
    // A file that is there but does not load (missing dependency, wrong architecture) is a
    // real error; a path that is not there is only a miss in the search.
    std::error_code ec;
    const bool exists = path.find('/') != std::string::npos && std::filesystem::exists(path, ec);
    return Status(exists ? StatusCode::kInvalidGraph : StatusCode::kNoSuchFile, DlError());
  }
  auto* create =
      reinterpret_cast<OrtcBackendCreateFn>(dlsym(lib->handle_, ORTC_BACKEND_CREATE_SYMBOL));
  auto* release =
      reinterpret_cast<OrtcBackendReleaseFn>(dlsym(lib->handle_, ORTC_BACKEND_RELEASE_SYMBOL));
  if (!create || !release) {
    return InvalidGraph(path + " is not an ortc backend plugin: it does not export " +
                        (create ? ORTC_BACKEND_RELEASE_SYMBOL : ORTC_BACKEND_CREATE_SYMBOL));
  }
  lib->release_ = release;
  OrtcHostApi host{};
  host.abi_version = host_abi_version;
  host.struct_size = sizeof(OrtcHostApi);
  OrtcBackend* backend = nullptr;
  const OrtcPluginStatus s = create(host_abi_version, &host, &backend);
  if (s == ORTC_PLUGIN_ABI_MISMATCH) {
    return InvalidGraph(path + " refused this runtime's backend ABI version " +
                        std::to_string(host_abi_version) +
                        ": use the backend library built with this ortc version");
  }
  if (s != ORTC_PLUGIN_OK || !backend) {
    return InvalidGraph(path + ": " + ORTC_BACKEND_CREATE_SYMBOL + " failed (status " +
                        std::to_string(static_cast<int>(s)) + ")");
  }
  // The first two fields have the same place in every ABI version: safe to read before trusting
  // the rest.
  if (backend->abi_version != host_abi_version || backend->struct_size < sizeof(OrtcBackend)) {
    const uint32_t theirs = backend->abi_version;
    release(backend);
    return InvalidGraph(path + " implements backend ABI version " + std::to_string(theirs) +
                        " but this runtime needs version " + std::to_string(host_abi_version) +
                        ": use the backend library built with this ortc version");
  }
  if (!backend->describe_device || !backend->load_graph || !backend->run_graph ||
      !backend->release_graph || !backend->last_error || !backend->describe_graph ||
      !backend->last_run_profile) {
    release(backend);
    return InvalidGraph(path + ": the backend's function table is incomplete");
  }
  lib->backend_ = backend;
  return lib;
}

BackendLibrary::~BackendLibrary() {
  if (backend_ && release_) release_(backend_);
  // The library stays mapped: vendor libraries it loaded may hold process-wide state (the CUDA
  // driver) that must not be torn down under other users.
}

std::string BackendLibrary::name() const {
  return backend_ && backend_->name ? backend_->name : "";
}

Status BackendLibrary::StatusOf(OrtcPluginStatus s, const std::string& what) const {
  if (s == ORTC_PLUGIN_OK) return Status::Ok();
  const char* text = backend_->last_error(backend_);
  const std::string msg = what + ": " + (text && *text ? text : "the backend gave no reason");
  switch (s) {
    case ORTC_PLUGIN_INVALID_ARGUMENT:
      return InvalidArgument(msg);
    case ORTC_PLUGIN_NOT_IMPLEMENTED:
      return NotImplemented(msg);
    case ORTC_PLUGIN_EP_FAIL:
      return Status(StatusCode::kEpFail, msg);
    case ORTC_PLUGIN_UNSUPPORTED:
      // The plugin cannot serve this machine (no driver, no device): its set-up, not the model.
      return Status(StatusCode::kEpFail, msg + " (verdict: unsupported)");
    default:
      return InvalidGraph(msg);
  }
}

namespace {

// The ABI's text-out calls, by the one rule of plugin_abi/plugin_text.h: a first try in 4 KiB,
// one retry in the size the plugin asked for (at most 64 MiB: a profile of a very long graph is
// large, but not that large).
template <typename Call>
Result<std::string> ReadText(const BackendLibrary& lib, const std::string& what, Call call) {
  auto got = plugin_abi::ReadPluginText(call);
  if (got.status == ORTC_PLUGIN_OK) return std::move(got.text);
  if (got.status != ORTC_PLUGIN_BUFFER_TOO_SMALL) return lib.StatusOf(got.status, what);
  return InvalidGraph(lib.path() + ": " + what + ": the text does not fit");
}

}  // namespace

Result<std::string> BackendLibrary::DescribeDevice() const {
  return ReadText(*this, "describing the device", [&](char* b, size_t n, size_t* len) {
    return backend_->describe_device(backend_, b, n, len);
  });
}

Result<std::string> BackendLibrary::DescribeGraph(OrtcGraph* graph) const {
  return ReadText(*this, "describing a graph", [&](char* b, size_t n, size_t* len) {
    return backend_->describe_graph(graph, b, n, len);
  });
}

Result<std::string> BackendLibrary::CheckBinary(const OrtcBinaryFacts& facts,
                                                int32_t* verdict) const {
  return ReadText(*this, "checking a binary", [&](char* b, size_t n, size_t* len) {
    return backend_->check_binary(backend_, &facts, verdict, b, n, len);
  });
}

Result<std::string> BackendLibrary::LastRunProfile(OrtcGraph* graph) const {
  return ReadText(*this, "reading a run's profile", [&](char* b, size_t n, size_t* len) {
    return backend_->last_run_profile(graph, b, n, len);
  });
}

Result<std::shared_ptr<BackendLibrary>> GetBackend(const std::string& backend) {
  static std::mutex mu;
  static std::map<std::string, Result<std::shared_ptr<BackendLibrary>>> loaded;
  std::lock_guard<std::mutex> lock(mu);
  auto it = loaded.find(backend);
  if (it != loaded.end()) return it->second;
  std::string attempts;
  Result<std::shared_ptr<BackendLibrary>> result =
      NoSuchFile("no " + backend + " backend library found");
  for (const auto& path : CandidatePaths(backend)) {
    auto lib = BackendLibrary::Open(path);
    if (lib.ok()) {
      result = lib;
      break;
    }
    // A library that exists but is refused is reported at once rather than masked by a later
    // candidate: it is the one the user put in place.
    if (lib.status().code() != StatusCode::kNoSuchFile) {
      result = lib.status();
      break;
    }
    attempts += (attempts.empty() ? "" : "; ") + lib.status().message();
  }
  if (!result.ok() && result.status().code() == StatusCode::kNoSuchFile) {
    result = NoSuchFile("the " + backend + " backend library libortc_backend_" + backend +
                        ".so was not found (set ORTC_BACKEND_PATH to its folder): " + attempts);
  }
  loaded.emplace(backend, result);
  return result;
}

}  // namespace ortc::plugin
