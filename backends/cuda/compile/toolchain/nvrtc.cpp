// NVRTC through dlopen and a symbol table (types from <nvrtc.h> when the toolkit headers are
// present), loaded once per process; compiles one program per target to cubin or PTX.
#include "cuda/compile/toolchain/nvrtc.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#ifdef ORTC_HAVE_CUDA_HEADERS
#include <nvrtc.h>
#endif

namespace ortc::backends::cuda::toolchain {
namespace {

#ifdef ORTC_HAVE_CUDA_HEADERS
using Program = nvrtcProgram;
using ResultCode = nvrtcResult;
#define ORTC_NVRTC_TYPE(name, fallback) decltype(&::name)
#else
// Without the headers: NVRTC's documented C signatures (nvrtcResult is an int enum).
using Program = struct _nvrtcProgram*;
using ResultCode = int;
#define ORTC_NVRTC_TYPE(name, fallback) fallback
#endif

struct Nvrtc {
  ORTC_NVRTC_TYPE(nvrtcVersion, int (*)(int*, int*)) version = nullptr;
  ORTC_NVRTC_TYPE(nvrtcGetErrorString, const char* (*)(int)) error_string = nullptr;
  ORTC_NVRTC_TYPE(nvrtcCreateProgram, int (*)(Program*, const char*, const char*, int,
                                              const char* const*, const char* const*))
  create = nullptr;
  ORTC_NVRTC_TYPE(nvrtcDestroyProgram, int (*)(Program*)) destroy = nullptr;
  ORTC_NVRTC_TYPE(nvrtcCompileProgram, int (*)(Program, int, const char* const*)) compile = nullptr;
  ORTC_NVRTC_TYPE(nvrtcGetProgramLogSize, int (*)(Program, size_t*)) log_size = nullptr;
  ORTC_NVRTC_TYPE(nvrtcGetProgramLog, int (*)(Program, char*)) log = nullptr;
  ORTC_NVRTC_TYPE(nvrtcGetCUBINSize, int (*)(Program, size_t*)) cubin_size = nullptr;
  ORTC_NVRTC_TYPE(nvrtcGetCUBIN, int (*)(Program, char*)) cubin = nullptr;
  ORTC_NVRTC_TYPE(nvrtcGetPTXSize, int (*)(Program, size_t*)) ptx_size = nullptr;
  ORTC_NVRTC_TYPE(nvrtcGetPTX, int (*)(Program, char*)) ptx = nullptr;
  NvrtcInfo info;
};

template <typename F>
bool Bind(void* lib, const char* symbol, F* slot) {
  *slot = reinterpret_cast<F>(dlsym(lib, symbol));
  return *slot != nullptr;
}

Result<Nvrtc> Open() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("ORTC_NVRTC_LIBRARY"); env && *env) {
    candidates = {env};  // an explicit choice is not second-guessed
  } else {
    candidates = {"libnvrtc.so.13", "libnvrtc.so"};
#ifdef ORTC_CUDA_TOOLKIT_LIBRARY_DIR
    candidates.push_back(std::string(ORTC_CUDA_TOOLKIT_LIBRARY_DIR) + "/libnvrtc.so.13");
#endif
  }
  void* lib = nullptr;
  std::string tried;
  for (const auto& c : candidates) {
    lib = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib) {
      Nvrtc n;
      n.info.library = c;
      const bool ok = Bind(lib, "nvrtcVersion", &n.version) &&
                      Bind(lib, "nvrtcGetErrorString", &n.error_string) &&
                      Bind(lib, "nvrtcCreateProgram", &n.create) &&
                      Bind(lib, "nvrtcDestroyProgram", &n.destroy) &&
                      Bind(lib, "nvrtcCompileProgram", &n.compile) &&
                      Bind(lib, "nvrtcGetProgramLogSize", &n.log_size) &&
                      Bind(lib, "nvrtcGetProgramLog", &n.log) &&
                      Bind(lib, "nvrtcGetCUBINSize", &n.cubin_size) &&
                      Bind(lib, "nvrtcGetCUBIN", &n.cubin) &&
                      Bind(lib, "nvrtcGetPTXSize", &n.ptx_size) && Bind(lib, "nvrtcGetPTX", &n.ptx);
      if (!ok) {
        dlclose(lib);
        return Status(StatusCode::kEpFail, "NVRTC library " + c + " lacks expected symbols (" +
                                               dlerror() +
                                               "): install the CUDA toolkit or set "
                                               "ORTC_NVRTC_LIBRARY");
      }
      // The library stays loaded for the life of the process.
      if (n.version(&n.info.major, &n.info.minor) != 0)
        return Status(StatusCode::kEpFail, "nvrtcVersion failed in " + c);
      return n;
    }
    tried += (tried.empty() ? "" : ", ") + c;
  }
  // The machine lacks the toolkit: a set-up problem (exit 7), not the model's.
  return Status(StatusCode::kEpFail,
                "NVRTC (CUDA toolkit runtime compiler) not found: install the CUDA toolkit or set "
                "ORTC_NVRTC_LIBRARY (tried " +
                    tried + ")");
}

const Result<Nvrtc>& Library() {
  static const Result<Nvrtc> lib = Open();  // thread-safe, once per process
  return lib;
}

std::string ErrorText(const Nvrtc& n, int code) {
  const char* s = n.error_string(static_cast<ResultCode>(code));
  return s ? s : "NVRTC error " + std::to_string(code);
}

}  // namespace

Result<NvrtcInfo> LoadNvrtc() {
  const auto& lib = Library();
  if (!lib.ok()) return lib.status();
  return lib.value().info;
}

Result<std::vector<ModuleImage>> CompileModule(
    const std::string& source, const std::vector<std::string>& cubin_archs,
    const std::string& ptx_arch,
    const std::function<void(const std::string& target, int done, int total)>& on_target) {
  const auto& lib = Library();
  if (!lib.ok()) return lib.status();
  const Nvrtc& n = lib.value();
  std::vector<std::pair<std::string, bool>> targets;
  for (const auto& a : cubin_archs) {
    if (a.rfind("sm_", 0) != 0) return InvalidArgument("cubin target '" + a + "' is not sm_XX");
    targets.emplace_back(a, false);
  }
  if (!ptx_arch.empty()) {
    if (ptx_arch.rfind("compute_", 0) != 0)
      return InvalidArgument("PTX target '" + ptx_arch + "' is not compute_XX");
    targets.emplace_back(ptx_arch, true);
  }
  std::vector<ModuleImage> images;
  for (const auto& [arch, is_ptx] : targets) {
    if (on_target)
      on_target(arch, static_cast<int>(images.size()), static_cast<int>(targets.size()));
    Program prog = nullptr;
    int rc = n.create(&prog, source.c_str(), "ortc_kernels.cu", 0, nullptr, nullptr);
    if (rc != 0) return Status(StatusCode::kEpFail, "nvrtcCreateProgram: " + ErrorText(n, rc));
    // IEEE semantics are kept: no --use_fast_math, denormals and precise division/sqrt stay on.
    const std::string arch_opt = "--gpu-architecture=" + arch;
    const char* options[] = {arch_opt.c_str(), "-std=c++17"};
    rc = n.compile(prog, 2, options);
    size_t log_size = 0;
    std::string log;
    if (n.log_size(prog, &log_size) == 0 && log_size > 1) {
      log.resize(log_size);
      n.log(prog, log.data());
      log.resize(log_size - 1);
    }
    if (rc != 0) {
      n.destroy(&prog);
      return Status(StatusCode::kEpFail,
                    "NVRTC failed to compile for " + arch + " (" + ErrorText(n, rc) + "):\n" + log);
    }
    ModuleImage image;
    image.target = arch;
    image.is_ptx = is_ptx;
    size_t size = 0;
    rc = is_ptx ? n.ptx_size(prog, &size) : n.cubin_size(prog, &size);
    if (rc == 0) {
      image.bytes.resize(size);
      rc = is_ptx ? n.ptx(prog, image.bytes.data()) : n.cubin(prog, image.bytes.data());
    }
    n.destroy(&prog);
    if (rc != 0)
      return Status(StatusCode::kEpFail, "NVRTC output for " + arch + ": " + ErrorText(n, rc));
    // PTX is text: drop its terminating NUL.
    if (is_ptx && !image.bytes.empty() && image.bytes.back() == '\0') image.bytes.pop_back();
    images.push_back(std::move(image));
  }
  return images;
}

const std::vector<std::string>& DefaultTargetArchs() {
  static const std::vector<std::string> archs = {"sm_80", "sm_86", "sm_89", "sm_90"};
  return archs;
}

}  // namespace ortc::backends::cuda::toolchain
