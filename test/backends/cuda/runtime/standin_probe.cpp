// dlopen of the stand-in driver and lookup of its record functions.
#include "standin_probe.h"

#include <dlfcn.h>

#include <sstream>

namespace ortc::test {

StandinProbe::StandinProbe() {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    error_ = std::string("libcuda.so.1 does not load: ") + (e ? e : "?");
    return;
  }
  auto sym = [&](const char* name) { return dlsym(h, name); };
  count_ = reinterpret_cast<size_t (*)(const char*)>(sym("ortc_standin_count"));
  trace_ = reinterpret_cast<const char* (*)()>(sym("ortc_standin_trace"));
  live_ = reinterpret_cast<long (*)(const char*)>(sym("ortc_standin_live"));
  device_bytes_ = reinterpret_cast<size_t (*)()>(sym("ortc_standin_live_device_bytes"));
  alloc_ = reinterpret_cast<int (*)(unsigned long long*, size_t)>(sym("cuMemAlloc_v2"));
  free_ = reinterpret_cast<int (*)(unsigned long long)>(sym("cuMemFree_v2"));
  if (count_ && trace_ && live_ && device_bytes_ && alloc_ && free_)
    reset_ = reinterpret_cast<void (*)()>(sym("ortc_standin_reset"));
  if (!reset_)
    error_ = "libcuda.so.1 is not the stand-in driver: put its folder first on LD_LIBRARY_PATH";
}

void* StandinProbe::DeviceAlloc(size_t bytes) const {
  unsigned long long p = 0;
  return alloc_(&p, bytes) == 0 ? reinterpret_cast<void*>(p) : nullptr;
}

void StandinProbe::DeviceFree(void* p) const {
  free_(reinterpret_cast<unsigned long long>(p));
}

std::vector<std::string> StandinProbe::Trace() const {
  std::vector<std::string> out;
  std::stringstream ss(trace_());
  for (std::string line; std::getline(ss, line);) out.push_back(line);
  return out;
}

}  // namespace ortc::test
