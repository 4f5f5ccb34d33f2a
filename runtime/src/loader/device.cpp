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
// A version as the libraries report it: "9", "9.1" or "9.1.0" ("" means not found).
bool IsVersionText(const std::string& v) {
  int parts = 0;
  size_t at = 0;
  while (at <= v.size()) {
    size_t dot = v.find('.', at);
    if (dot == std::string::npos) dot = v.size();
    if (dot == at) return false;
    for (size_t i = at; i < dot; ++i)
      if (v[i] < '0' || v[i] > '9') return false;
    ++parts;
    at = dot + 1;
  }
  return parts >= 1 && parts <= 3;
}

// Each field is checked by type and form, and a wrong one named: a number where a version string
// belongs must not read as "library not found".
std::string StringField(const nlohmann::json& c, const char* section, const char* key) {
  if (!c.contains(key)) return {};
  if (!c[key].is_string())
    throw std::invalid_argument(std::string(section) + "." + key + " must be a string");
  return c[key].get<std::string>();
}

std::vector<std::string> StringList(const nlohmann::json& c, const char* section, const char* key,
                                    const char* example) {
  if (!c.contains(key)) return {};
  const auto& v = c[key];
  bool ok = v.is_array();
  for (size_t i = 0; ok && i < v.size(); ++i) ok = v[i].is_string();
  if (!ok)
    throw std::invalid_argument(std::string(section) + "." + key + " must be a list of strings, " +
                                "like " + example);
  return v.get<std::vector<std::string>>();
}

void ApplyCuda(const nlohmann::json& c, DeviceDescription* d) {
  d->cuda_driver_version = 0;
  if (c.contains("driver_version")) {
    // Checked before conversion: a float or an out-of-range number cast to int is undefined.
    const auto& v = c["driver_version"];
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > INT32_MAX)
      throw std::invalid_argument("cuda.driver_version must be a non-negative integer");
    d->cuda_driver_version = static_cast<int>(v.get<int64_t>());
  }
  d->cuda_archs = StringList(c, "cuda", "archs", "[\"sm_90\"]");
  for (const auto& arch : d->cuda_archs) {
    if (arch.rfind("sm_", 0) != 0 || arch.size() < 5 ||
        arch.find_first_not_of("0123456789", 3) != std::string::npos)
      throw std::invalid_argument("cuda.archs: '" + arch + "' is not an architecture like sm_90");
  }
  for (const char* key : {"cudnn_version", "cublas_version"}) {
    const std::string v = StringField(c, "cuda", key);
    if (!v.empty() && !IsVersionText(v))
      throw std::invalid_argument(std::string("cuda.") + key + " '" + v +
                                  "' is not a version like \"9.1.0\"");
  }
  d->cudnn_version = StringField(c, "cuda", "cudnn_version");
  d->cublas_version = StringField(c, "cuda", "cublas_version");
  d->cuda_unavailable_reason = StringField(c, "cuda", "unavailable_reason");
  d->cudnn_reason = StringField(c, "cuda", "cudnn_reason");
  d->cublas_reason = StringField(c, "cuda", "cublas_reason");
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
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error; out_of_range for 1e400
    // A number out of range (1e400) or NaN is not JSON: the parser's reason says where.
    return InvalidArgument(std::string("device description is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) return InvalidArgument("device description is not a JSON object");
  DeviceDescription d = DetectHost();
  d.cuda_unavailable_reason = "the device description has no \"cuda\" object";
  try {
    if (j.contains("cpu")) {
      const auto& c = j["cpu"];
      if (!c.is_object()) return InvalidArgument("device description: \"cpu\" is not an object");
      if (c.contains("arch")) d.cpu_arch = StringField(c, "cpu", "arch");
      if (c.contains("little_endian")) {
        if (!c["little_endian"].is_boolean())
          return InvalidArgument("device description: cpu.little_endian must be true or false");
        d.little_endian = c["little_endian"].get<bool>();
      }
      if (c.contains("isa")) d.cpu_isa = StringList(c, "cpu", "isa", "[\"avx2\"]");
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
