// Static registration of the in-tree backends (one line each) as compile-side ABI tables, and
// the plugins loaded by name.
#include "registry.h"

#include <map>
#include <memory>
#include <mutex>

#include "abi/abi_backend.h"
#include "abi/in_process_compiler.h"
#include "abi/plugin_compilers.h"
#include "cpu/compile/capability.h"
#include "cuda/compile/capability.h"

namespace ortc::backends {
namespace {

const std::vector<const Backend*>& InTree() {
  static const abi::AbiBackend cpu(abi::InProcessCompiler(cpu::CpuBackend()), nullptr);
  static const abi::AbiBackend cuda(abi::InProcessCompiler(cuda::CudaBackend()), nullptr);
  static const std::vector<const Backend*> all = {&cpu, &cuda};
  return all;
}

struct Plugins {
  std::mutex mutex;
  std::vector<std::unique_ptr<abi::AbiBackend>> loaded;
  std::map<std::string, Status, std::less<>> failures;  // each name is tried once
};

Plugins& LoadedPlugins() {
  static Plugins* p = new Plugins;  // never destroyed: backends are used until exit
  return *p;
}

}  // namespace

std::vector<const Backend*> AllBackends() {
  std::vector<const Backend*> all = InTree();
  Plugins& p = LoadedPlugins();
  std::lock_guard<std::mutex> lock(p.mutex);
  for (const auto& b : p.loaded) all.push_back(b.get());
  return all;
}

Result<const Backend*> ResolveBackend(std::string_view name) {
  for (const Backend* b : InTree()) {
    if (b->name() == name) return b;
  }
  Plugins& p = LoadedPlugins();
  std::lock_guard<std::mutex> lock(p.mutex);
  for (const auto& b : p.loaded) {
    if (b->name() == name) return static_cast<const Backend*>(b.get());
  }
  if (auto it = p.failures.find(name); it != p.failures.end()) return it->second;
  auto loaded = abi::LoadPluginCompiler(std::string(name));
  if (!loaded.ok()) {
    p.failures.emplace(std::string(name), loaded.status());
    return loaded.status();
  }
  p.loaded.push_back(std::move(loaded).value());
  return static_cast<const Backend*>(p.loaded.back().get());
}

const Backend* FindBackend(std::string_view name) {
  auto b = ResolveBackend(name);
  return b.ok() ? *b : nullptr;
}

std::string KnownBackendNames() {
  std::string known;
  for (const Backend* b : AllBackends())
    known += (known.empty() ? "" : ", ") + std::string(b->name());
  return known;
}

}  // namespace ortc::backends
