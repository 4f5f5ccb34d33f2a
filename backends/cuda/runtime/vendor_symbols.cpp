// dlopen of libcuda.so.1, libcudnn.so.9 and libcublasLt.so.13 and the lookup of every symbol
// of their tables; a library with a missing symbol counts as not loaded and names the symbol.
#include "vendor_symbols.h"

#include <dlfcn.h>

#include <vector>

namespace ortc::cuda_rt {
namespace {

// Opens the first soname that loads; RTLD_LOCAL keeps vendor symbols out of the process scope.
void* OpenLibrary(const std::vector<std::string>& names, LibraryState* state) {
  std::string errors;
  for (const auto& name : names) {
    if (void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      state->soname = name;
      return h;
    }
    const char* e = dlerror();
    errors += (errors.empty() ? "" : "; ") + std::string(e ? e : name + ": cannot be loaded");
  }
  state->soname = names.front();
  state->error = errors;
  return nullptr;
}

template <typename T>
bool Resolve(void* handle, const char* symbol, T* slot, LibraryState* state) {
  *slot = reinterpret_cast<T>(dlsym(handle, symbol));
  if (!*slot && state->error.empty())
    state->error = state->soname + " does not export " + symbol + " (too old?)";
  return *slot != nullptr;
}

// Sonames to try: the plain one (the loader's search path), then the toolkit the plugin was
// built against, which is where cuBLASLt lives on machines that installed only the toolkit.
std::vector<std::string> Candidates(const std::string& soname) {
  std::vector<std::string> out{soname};
#ifdef ORTC_CUDA_TOOLKIT_LIBRARY_DIR
  out.push_back(std::string(ORTC_CUDA_TOOLKIT_LIBRARY_DIR) + "/" + soname);
#endif
  return out;
}

#define ORTC_CUDA_RESOLVE(name) ok = Resolve(h, ORTC_CUDA_STR(name), &api->name, api) && ok;

DriverApi* LoadDriver() {
  auto* api = new DriverApi();
  // The driver comes with the GPU's kernel module, never with the toolkit: only the soname.
  void* h = OpenLibrary({"libcuda.so.1"}, api);
  if (!h) return api;
  bool ok = true;
  ORTC_CUDA_DRIVER_SYMBOLS(ORTC_CUDA_RESOLVE)
  api->loaded = ok;
  return api;
}

CudnnApi* LoadCudnn() {
  auto* api = new CudnnApi();
  void* h = OpenLibrary(Candidates("libcudnn.so.9"), api);
  if (!h) return api;
  bool ok = true;
  ORTC_CUDNN_SYMBOLS(ORTC_CUDA_RESOLVE)
  api->loaded = ok;
  return api;
}

CublasLtApi* LoadCublasLt() {
  auto* api = new CublasLtApi();
  void* h = OpenLibrary(Candidates("libcublasLt.so.13"), api);
  if (!h) return api;
  bool ok = true;
  ORTC_CUBLASLT_SYMBOLS(ORTC_CUDA_RESOLVE)
  api->loaded = ok;
  return api;
}

}  // namespace

// Intentionally never freed: the libraries stay loaded for the life of the process.
const DriverApi& Driver() {
  static const DriverApi* api = LoadDriver();
  return *api;
}
const CudnnApi& Cudnn() {
  static const CudnnApi* api = LoadCudnn();
  return *api;
}
const CublasLtApi& CublasLt() {
  static const CublasLtApi* api = LoadCublasLt();
  return *api;
}

}  // namespace ortc::cuda_rt
