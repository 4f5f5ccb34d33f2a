// The tuning cache (schemas/tuning_cache.md): what `ortc tune` measured on one device, keyed by
// what each step computes, for compiles on machines without that device. Backends read it
// through their `tuning_cache` provider option and decide themselves whether it fits the compile
// (CUDA: the target architectures and the cuDNN version).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "ortc/status.h"

namespace ortc::backends {

inline constexpr char kTuningCacheFormat[] = "ortc-tuning-cache";
inline constexpr int kTuningCacheVersion = 1;

struct TuningEntry {
  std::string key;                            // TunableChoice::key
  std::string choice;                         // the fastest candidate
  std::map<std::string, double> measured_us;  // per candidate: median device time of the step
  int runs = 0;                               // timed runs per candidate
};

struct TuningCache {
  int version = kTuningCacheVersion;
  std::string backend;                        // "cuda"
  std::map<std::string, std::string> device;  // backend-specific: arch, cudnn, cublas, driver...
  std::string made_by;                        // the compiler that measured it
  std::vector<TuningEntry> entries;
};

// Reads a cache file. A file that cannot be read, is not a tuning cache or is malformed is an
// error naming the file; a cache of another format version is returned with only `version` set
// (the caller reports it and ignores it).
Result<TuningCache> ReadTuningCache(const std::filesystem::path& path);
// The cache as JSON text (entries sorted by key, so equal caches are equal files).
std::string TuningCacheJson(const TuningCache& cache);

}  // namespace ortc::backends
