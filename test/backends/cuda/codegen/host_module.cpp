// HostModule: writes the shimmed translation unit, compiles it once per content hash with the
// tests' own C++ compiler, dlopens it and calls per-kernel trampolines.
#include "host_module.h"

#include <dlfcn.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ortc::test::cuda {
namespace {

namespace fs = std::filesystem;
using backends::cuda::codegen::KernelSource;

// Kernels take (inputs..., outputs...) pointers; the trampoline unpacks a void* array so one
// launcher in the shim can call any of them.
std::string Trampolines(const std::vector<KernelSource>& kernels) {
  std::string s = "\n// ---- host trampolines ----\n";
  for (const auto& k : kernels) {
    s += "extern \"C\" __attribute__((visibility(\"default\"))) void ortc_host_entry_" + k.name +
         "(void** a) { " + k.name + "(";
    for (int i = 0; i < k.num_inputs + k.num_outputs; ++i)
      s += (i ? ", a[" : "a[") + std::to_string(i) + "]";
    s += "); }\n";
  }
  return s;
}

std::string ReadFile(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

Result<HostModule> HostModule::Compile(const std::vector<KernelSource>& kernels) {
  return CompileText(backends::cuda::codegen::TranslationUnit(kernels), kernels);
}

Result<HostModule> HostModule::CompileText(const std::string& tu,
                                           const std::vector<KernelSource>& kernels) {
  const std::string flags = "-std=c++17 -O1 -ffp-contract=off -fno-fast-math -fPIC -shared -w";
  const std::string text = "#include \"" ORTC_HOST_SHIM_HEADER "\"\n" + tu + Trampolines(kernels);
  const std::string key = text + "\n" ORTC_HOST_CXX " " + flags;
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(XXH3_64bits(key.data(), key.size())));
  const fs::path dir = ORTC_HOST_MODULE_DIR;
  std::error_code ec;
  fs::create_directories(dir, ec);
  const fs::path so = dir / (std::string(hash) + ".so");
  if (!fs::exists(so)) {
    // Parallel test processes may build the same module: each writes its own temporary files
    // and the rename publishes a complete object.
    const std::string tmp = std::string(hash) + "." + std::to_string(getpid());
    const fs::path src = dir / (tmp + ".cpp"), out = dir / (tmp + ".so"),
                   log = dir / (tmp + ".log");
    std::ofstream(src, std::ios::binary) << text;
    const std::string cmd = Quote(ORTC_HOST_CXX) + " " + flags + " -o " + Quote(out.string()) +
                            " " + Quote(src.string()) + " > " + Quote(log.string()) + " 2>&1";
    if (std::system(cmd.c_str()) != 0) {
      return InvalidArgument("host compile of the generated kernels failed (" + src.string() +
                             "):\n" + ReadFile(log).substr(0, 8000));
    }
    // The source stays next to the object, for reading a failing kernel.
    fs::rename(src, dir / (std::string(hash) + ".cpp"), ec);
    fs::rename(out, so, ec);
    fs::remove(log, ec);
  }
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) return InvalidArgument(std::string("dlopen of the host module failed: ") + dlerror());
  HostModule m;
  m.handle_ = std::shared_ptr<void>(h, [](void* p) { dlclose(p); });
  m.path_ = so.string();
  return m;
}

Status HostModule::Launch(const KernelSource& kernel, const std::vector<void*>& args) const {
  if (static_cast<int>(args.size()) != kernel.num_inputs + kernel.num_outputs) {
    return InvalidArgument(kernel.name + ": expected " +
                           std::to_string(kernel.num_inputs + kernel.num_outputs) +
                           " arguments, got " + std::to_string(args.size()));
  }
  using Launcher =
      int (*)(void (*)(void**), void**, const unsigned*, const unsigned*, int, const char**);
  auto launch = reinterpret_cast<Launcher>(dlsym(handle_.get(), "ortc_host_launch"));
  auto entry = reinterpret_cast<void (*)(void**)>(
      dlsym(handle_.get(), ("ortc_host_entry_" + kernel.name).c_str()));
  if (!launch || !entry) return InvalidArgument("kernel " + kernel.name + " is not in the module");
  std::vector<void*> a = args;
  const char* error = nullptr;
  if (launch(entry, a.data(), kernel.grid.data(), kernel.block.data(),
             kernel.uses_block_sync ? 1 : 0, &error) != 0) {
    return InvalidArgument(kernel.name + ": " + (error ? error : "launch failed"));
  }
  return Status::Ok();
}

}  // namespace ortc::test::cuda
