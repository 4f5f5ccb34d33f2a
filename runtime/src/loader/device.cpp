// Device description: detection on this machine, or parsing an injected JSON description.
#include <nlohmann/json.hpp>

#include <bit>

#include "ortc/runtime.h"

namespace ortc {

std::string_view VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kOptimal:
      return "optimal";
    case Verdict::kPreferRecompilation:
      return "prefer recompilation";
    case Verdict::kUnsupported:
      return "unsupported";
  }
  return "?";
}

DeviceDescription DeviceDescription::Detect() {
  DeviceDescription d;
#if defined(__x86_64__)
  d.cpu_arch = "x86_64";
  __builtin_cpu_init();
  if (__builtin_cpu_supports("sse4.2")) d.cpu_isa.push_back("sse4.2");
  if (__builtin_cpu_supports("avx2")) d.cpu_isa.push_back("avx2");
  if (__builtin_cpu_supports("fma")) d.cpu_isa.push_back("fma");
  if (__builtin_cpu_supports("avx512f")) d.cpu_isa.push_back("avx512f");
#elif defined(__aarch64__)
  d.cpu_arch = "aarch64";
#else
  d.cpu_arch = "unknown";
#endif
  d.little_endian = std::endian::native == std::endian::little;
  return d;
}

Result<DeviceDescription> DeviceDescription::FromJson(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return InvalidArgument("device description is not a JSON object");
  DeviceDescription d = Detect();
  try {
    if (j.contains("cpu")) {
      const auto& c = j["cpu"];
      if (c.contains("arch")) d.cpu_arch = c["arch"].get<std::string>();
      if (c.contains("little_endian")) d.little_endian = c["little_endian"].get<bool>();
      if (c.contains("isa")) d.cpu_isa = c["isa"].get<std::vector<std::string>>();
    }
    if (j.contains("cuda")) {
      const auto& c = j["cuda"];
      if (c.contains("driver_version")) d.cuda_driver_version = c["driver_version"].get<int>();
      if (c.contains("archs")) d.cuda_archs = c["archs"].get<std::vector<std::string>>();
    }
  } catch (const std::exception& e) {
    return InvalidArgument(std::string("device description: ") + e.what());
  }
  return d;
}

}  // namespace ortc
