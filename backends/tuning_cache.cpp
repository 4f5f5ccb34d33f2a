// Reading and writing tuning caches (tuning_cache.h).
#include "tuning_cache.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace ortc::backends {
namespace {

using nlohmann::json;

Status Malformed(const std::filesystem::path& path, const std::string& why) {
  return InvalidArgument("tuning cache " + path.string() + ": " + why +
                         " (make one with `ortc tune` on the GPU machine)");
}

}  // namespace

Result<TuningCache> ReadTuningCache(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NoSuchFile("tuning cache " + path.string() + " cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  const json j = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Malformed(path, "not JSON");
  if (j.value("format", std::string()) != kTuningCacheFormat)
    return Malformed(path, std::string("no \"format\": \"") + kTuningCacheFormat + "\"");
  if (!j.contains("version") || !j["version"].is_number_integer())
    return Malformed(path, "no integer \"version\"");
  TuningCache c;
  c.version = j["version"].get<int>();
  if (c.version != kTuningCacheVersion) return c;
  if (!j.contains("backend") || !j["backend"].is_string())
    return Malformed(path, "no \"backend\" name");
  c.backend = j["backend"].get<std::string>();
  if (!j.contains("device") || !j["device"].is_object())
    return Malformed(path, "no \"device\" object");
  for (const auto& [k, v] : j["device"].items()) {
    if (!v.is_string()) return Malformed(path, "device \"" + k + "\" is not a string");
    c.device[k] = v.get<std::string>();
  }
  c.made_by = j.value("made_by", std::string());
  if (!j.contains("entries") || !j["entries"].is_array())
    return Malformed(path, "no \"entries\" array");
  for (const auto& e : j["entries"]) {
    if (!e.is_object() || !e.contains("key") || !e["key"].is_string() || !e.contains("choice") ||
        !e["choice"].is_string())
      return Malformed(path, "an entry without a \"key\" and a \"choice\"");
    TuningEntry t;
    t.key = e["key"].get<std::string>();
    t.choice = e["choice"].get<std::string>();
    if (e.contains("measured_us") && e["measured_us"].is_object()) {
      for (const auto& [k, v] : e["measured_us"].items()) {
        if (!v.is_number()) return Malformed(path, "a measurement that is not a number");
        t.measured_us[k] = v.get<double>();
      }
    }
    t.runs = e.value("runs", 0);
    c.entries.push_back(std::move(t));
  }
  return c;
}

std::string TuningCacheJson(const TuningCache& cache) {
  json j;
  j["format"] = kTuningCacheFormat;
  j["version"] = cache.version;
  j["backend"] = cache.backend;
  j["device"] = cache.device;
  j["made_by"] = cache.made_by;
  std::vector<TuningEntry> entries = cache.entries;
  std::sort(entries.begin(), entries.end(),
            [](const TuningEntry& a, const TuningEntry& b) { return a.key < b.key; });
  j["entries"] = json::array();
  for (const auto& e : entries) {
    j["entries"].push_back(
        {{"key", e.key}, {"choice", e.choice}, {"measured_us", e.measured_us}, {"runs", e.runs}});
  }
  return j.dump(2) + "\n";
}

}  // namespace ortc::backends
