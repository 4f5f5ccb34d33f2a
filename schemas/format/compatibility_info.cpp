// The compatibility string, written and read: see compatibility_info.h.
#include "format/compatibility_info.h"

#include <cstdlib>
#include <map>
#include <sstream>

#include "context_binary_format.h"
#include "cuda_binary_keys.h"

namespace ortc::format {
namespace {

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);)
    if (!part.empty()) out.push_back(part);
  return out;
}

// Whether a text can stand in a field of the string, which ';' and '=' delimit.
bool Fits(const std::string& text) {
  return text.find_first_of(";=") == std::string::npos;
}

bool KnownField(const std::string& key) {
  return key == "format" || key == "cpu" || key == "cuda" || key == "cuda_driver" ||
         key == "cudnn" || key == "cublas";
}

}  // namespace

CudaBinaryFacts CudaFactsOf(const std::vector<std::pair<std::string, std::string>>& versions,
                            const std::vector<std::string>& hardware_targets) {
  CudaBinaryFacts f;
  for (const auto& [key, value] : versions) {
    if (key == cuda_keys::kMinDriver) f.min_driver = std::atoi(value.c_str());
    if (key == cuda_keys::kCudnnVersion) f.cudnn_version = value;
    if (key == cuda_keys::kCublasVersion) f.cublas_version = value;
  }
  f.targets = hardware_targets;
  return f;
}

CudaBinaryFacts CudaFactsOf(const fb::Manifest& manifest) {
  std::vector<std::pair<std::string, std::string>> versions;
  if (const auto* kv = manifest.backend_versions()) {
    for (const auto* e : *kv)
      if (e->key() && e->value()) versions.emplace_back(e->key()->str(), e->value()->str());
  }
  std::vector<std::string> targets;
  if (const auto* t = manifest.hardware_targets())
    for (const auto* s : *t) targets.push_back(s->str());
  return CudaFactsOf(versions, targets);
}

std::string CompatibilityInfo(const std::vector<BinaryFacts>& binaries) {
  std::string info =
      "ortc;format=" + std::to_string(kFormatMajor) + "." + std::to_string(kFormatMinor);
  for (const auto& bin : binaries) {
    if (bin.backend == "cpu") {
      info += ";cpu=" + Join(bin.hardware_targets);
    } else if (bin.backend == "cuda") {
      const auto facts = CudaFactsOf(bin.versions, bin.hardware_targets);
      info += ";cuda=" + Join(facts.targets) + ";cuda_driver=" + std::to_string(facts.min_driver);
      if (!facts.cudnn_version.empty()) info += ";cudnn=" + facts.cudnn_version;
      if (!facts.cublas_version.empty()) info += ";cublas=" + facts.cublas_version;
    } else {
      info += ";" + bin.backend + "=" + Join(bin.hardware_targets);
      for (const auto& [key, value] : bin.versions) {
        if (Fits(key) && Fits(value)) info += ";" + bin.backend + "." + key + "=" + value;
      }
    }
  }
  return info;
}

ParsedCompatibility ParseCompatibilityInfo(const std::string& info) {
  ParsedCompatibility p;
  auto fields = Split(info, ';');
  if (fields.empty() || fields[0] != "ortc") return p;  // not ours
  p.ours = true;
  std::map<std::string, std::string> kv;
  auto plugin = [&p](const std::string& backend) -> BinaryFacts& {
    for (auto& b : p.plugins)
      if (b.backend == backend) return b;
    p.plugins.push_back({backend, {}, {}});
    return p.plugins.back();
  };
  for (size_t i = 1; i < fields.size(); ++i) {
    auto eq = fields[i].find('=');
    if (eq == std::string::npos) continue;
    const std::string key = fields[i].substr(0, eq), value = fields[i].substr(eq + 1);
    kv[key] = value;
    if (KnownField(key) || key.empty()) continue;
    // "<backend>=<targets>" and "<backend>.<version key>=<value>": a plugin backend's facts.
    const size_t dot = key.find('.');
    if (dot == std::string::npos) {
      plugin(key).hardware_targets = Split(value, ',');
    } else if (dot > 0) {
      plugin(key.substr(0, dot)).versions.emplace_back(key.substr(dot + 1), value);
    }
  }
  p.format = kv.count("format") ? kv["format"] : "";
  if (kv.count("cpu")) {
    p.has_cpu = true;
    p.cpu_targets = Split(kv["cpu"], ',');
  }
  if (kv.count("cuda")) {
    p.has_cuda = true;
    p.cuda.targets = Split(kv["cuda"], ',');
    p.cuda.min_driver = kv.count("cuda_driver") ? std::atoi(kv["cuda_driver"].c_str()) : 0;
    p.cuda.cudnn_version = kv.count("cudnn") ? kv["cudnn"] : "";
    p.cuda.cublas_version = kv.count("cublas") ? kv["cublas"] : "";
  }
  return p;
}

bool NeedsCuda(const std::string& info) {
  return info.find(";cuda=") != std::string::npos;
}

}  // namespace ortc::format
