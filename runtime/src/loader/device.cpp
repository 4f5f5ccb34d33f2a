// Device description: detection on this machine (CPU directly, CUDA through the CUDA backend
// library), or parsing an injected JSON description.
#include <nlohmann/json.hpp>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <bit>
#include <cstdint>
#include <mutex>
#include <stdexcept>

#include "ortc/runtime.h"
#include "plugin/backend_library.h"

namespace ortc {
namespace {

#if defined(__x86_64__)
// AMX tiles with bf16 and int8, usable: CPUID leaf 7 says the CPU has them and XCR0 says the OS
// saves the tile state (bits 17, 18). By hand because older compilers' __builtin_cpu_supports
// does not know the AMX names.
bool HasAmx() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  const bool cpu = (d >> 22 & 1) && (d >> 24 & 1) && (d >> 25 & 1);             // bf16, tile, int8
  if (!cpu || !__get_cpuid(1, &a, &b, &c, &d) || !(c >> 27 & 1)) return false;  // OSXSAVE
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  return (xcr0_lo >> 17 & 3) == 3;
}
#endif

// Reads the "cuda" object (the plugin's describe_device output has the same keys).
void ApplyCuda(const nlohmann::json& c, DeviceDescription* d) {
  auto str = [&](const char* key) {
    return c.contains(key) && c[key].is_string() ? c[key].get<std::string>() : std::string();
  };
  d->cuda_driver_version = 0;
  if (c.contains("driver_version")) {
    // Checked before conversion: a float or an out-of-range number cast to int is undefined.
    const auto& v = c["driver_version"];
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > INT32_MAX)
      throw std::invalid_argument("cuda.driver_version must be a non-negative integer");
    d->cuda_driver_version = static_cast<int>(v.get<int64_t>());
  }
  d->cuda_archs =
      c.contains("archs") ? c["archs"].get<std::vector<std::string>>() : std::vector<std::string>{};
  d->cudnn_version = str("cudnn_version");
  d->cublas_version = str("cublas_version");
  d->cuda_unavailable_reason = str("unavailable_reason");
  d->cudnn_reason = str("cudnn_reason");
  d->cublas_reason = str("cublas_reason");
}

// Asked once per process: loading the driver is not free and the answer does not change.
void DetectCuda(DeviceDescription* d) {
  static std::once_flag once;
  static DeviceDescription cuda;
  std::call_once(once, [] {
    auto lib = plugin::GetBackend("cuda");
    if (!lib.ok()) {
      cuda.cuda_unavailable_reason =
          "the CUDA backend library is not available (" + lib.status().message() + ")";
      return;
    }
    auto text = (*lib)->DescribeDevice();
    if (!text.ok()) {
      cuda.cuda_unavailable_reason = text.status().message();
      return;
    }
    nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
    try {
      if (j.is_object())
        ApplyCuda(j, &cuda);
      else
        cuda.cuda_unavailable_reason = "the CUDA backend library's device description is not JSON";
    } catch (const std::exception& e) {
      cuda = DeviceDescription();
      cuda.cuda_unavailable_reason =
          std::string("the CUDA backend library's device description is malformed: ") + e.what();
    }
  });
  d->cuda_driver_version = cuda.cuda_driver_version;
  d->cuda_archs = cuda.cuda_archs;
  d->cudnn_version = cuda.cudnn_version;
  d->cublas_version = cuda.cublas_version;
  d->cuda_unavailable_reason = cuda.cuda_unavailable_reason;
  d->cudnn_reason = cuda.cudnn_reason;
  d->cublas_reason = cuda.cublas_reason;
}

}  // namespace

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

DeviceDescription DeviceDescription::DetectHost() {
  DeviceDescription d;
#if defined(__x86_64__)
  d.cpu_arch = "x86_64";
  __builtin_cpu_init();
  if (__builtin_cpu_supports("sse4.2")) d.cpu_isa.push_back("sse4.2");
  if (__builtin_cpu_supports("avx2")) d.cpu_isa.push_back("avx2");
  if (__builtin_cpu_supports("fma")) d.cpu_isa.push_back("fma");
  if (__builtin_cpu_supports("avx512f")) d.cpu_isa.push_back("avx512f");
  // bf16 dot products (AVX512-BF16): what CPU programs compiled with precision bf16 need.
  if (__builtin_cpu_supports("avx512bf16")) d.cpu_isa.push_back("avx512_bf16");
  // oneDNN's ISA levels, which packed weights (--target-isa) name.
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    d.cpu_isa.push_back("avx2_fma");
  const bool core = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  if (core) d.cpu_isa.push_back("avx512_core");
  if (core && __builtin_cpu_supports("avx512bf16")) d.cpu_isa.push_back("avx512_core_bf16");
  if (core && HasAmx()) d.cpu_isa.push_back("avx512_core_amx");
#elif defined(__aarch64__)
  d.cpu_arch = "aarch64";
#else
  d.cpu_arch = "unknown";
#endif
  d.little_endian = std::endian::native == std::endian::little;
  d.cuda_unavailable_reason = "CUDA was not detected";
  return d;
}

DeviceDescription DeviceDescription::Detect() {
  DeviceDescription d = DetectHost();
  DetectCuda(&d);
  return d;
}

std::string DeviceDescription::ToJson() const {
  nlohmann::json cuda{{"driver_version", cuda_driver_version}, {"archs", cuda_archs}};
  auto put = [&](const char* key, const std::string& value) {
    if (!value.empty()) cuda[key] = value;
  };
  put("cudnn_version", cudnn_version);
  put("cublas_version", cublas_version);
  put("unavailable_reason", cuda_unavailable_reason);
  put("cudnn_reason", cudnn_reason);
  put("cublas_reason", cublas_reason);
  const nlohmann::json j{
      {"cpu", {{"arch", cpu_arch}, {"little_endian", little_endian}, {"isa", cpu_isa}}},
      {"cuda", cuda}};
  return j.dump(2);
}

Result<DeviceDescription> DeviceDescription::FromJson(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return InvalidArgument("device description is not a JSON object");
  DeviceDescription d = DetectHost();
  d.cuda_unavailable_reason = "the device description has no \"cuda\" object";
  try {
    if (j.contains("cpu")) {
      const auto& c = j["cpu"];
      if (c.contains("arch")) d.cpu_arch = c["arch"].get<std::string>();
      if (c.contains("little_endian")) d.little_endian = c["little_endian"].get<bool>();
      if (c.contains("isa")) d.cpu_isa = c["isa"].get<std::vector<std::string>>();
    }
    if (j.contains("cuda")) {
      if (!j["cuda"].is_object())
        return InvalidArgument("device description: \"cuda\" is not an object");
      ApplyCuda(j["cuda"], &d);
    }
  } catch (const std::exception& e) {
    return InvalidArgument(std::string("device description: ") + e.what());
  }
  return d;
}

}  // namespace ortc
