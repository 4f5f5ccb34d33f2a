// Tuning caches for CUDA compiles (tuning_choices.h).
#include "cuda/compile/tuning_choices.h"

#include <algorithm>

#include "cuda/compile/identity.h"
#include "cuda_binary_keys.h"

namespace ortc::backends::cuda {
namespace {

// "9.19.0" -> "9".
std::string Major(const std::string& version) {
  return version.substr(0, version.find('.'));
}

std::string Get(const std::map<std::string, std::string>& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? std::string() : it->second;
}

}  // namespace

std::string CacheMismatch(const TuningCache& cache, const CudaOptions& options) {
  if (cache.version != kTuningCacheVersion)
    return "format version " + std::to_string(cache.version) + " (this compiler reads " +
           std::to_string(kTuningCacheVersion) + ")";
  if (cache.backend != cuda_keys::kBackend)
    return "made for backend '" + cache.backend + "', not cuda";
  const std::string arch = Get(cache.device, "arch");
  if (std::find(options.cubin_archs.begin(), options.cubin_archs.end(), arch) ==
      options.cubin_archs.end()) {
    std::string targets;
    for (const auto& a : options.cubin_archs) targets += (targets.empty() ? "" : ",") + a;
    return "measured on " + (arch.empty() ? std::string("an unnamed architecture") : arch) +
           ", this compile targets " + targets + " (--target-arch)";
  }
  std::string planned;
  for (const auto& [k, v] : LibraryVersions(true, false))
    if (k == cuda_keys::kCudnnVersion) planned = v;
  const std::string measured = Get(cache.device, "cudnn");
  if (!planned.empty() && Major(measured) != Major(planned))
    return "measured with cuDNN " + (measured.empty() ? std::string("(none)") : measured) +
           ", this compile plans for cuDNN " + planned;
  return "";
}

Status ApplyTuningCache(CudaOptions* options) {
  options->tuned_choices.clear();
  options->tuning_cache_ignored.clear();
  if (options->tuning_cache.empty()) return Status::Ok();
  auto cache = ReadTuningCache(options->tuning_cache);
  if (!cache.ok()) return cache.status();
  options->tuning_cache_ignored = CacheMismatch(*cache, *options);
  if (!options->tuning_cache_ignored.empty()) return Status::Ok();
  for (const auto& e : cache->entries) {
    if (e.choice != kChoiceGenerated && e.choice != kChoiceLibrary)
      return InvalidArgument("tuning cache " + options->tuning_cache + ": choice '" + e.choice +
                             "' for " + e.key + " is not one of generated, library");
    options->tuned_choices[e.key] = e.choice;
  }
  return Status::Ok();
}

std::vector<ProviderOptions> CudaTuningVariants() {
  return {{{"grouped_conv", kChoiceGenerated}}, {{"grouped_conv", kChoiceLibrary}}};
}

}  // namespace ortc::backends::cuda
