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
  for (size_t i = 1; i < fields.size(); ++i) {
    auto eq = fields[i].find('=');
    if (eq != std::string::npos) kv[fields[i].substr(0, eq)] = fields[i].substr(eq + 1);
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
