#include "loader/compatibility_info.h"

#include <map>
#include <sstream>

#include "context_binary_format.h"
#include "loader/version_gate.h"

namespace ortc::loader {

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

std::string CompatibilityInfo(const std::vector<BinaryFacts>& binaries) {
  std::string info = "ortc;format=" + std::to_string(format::kFormatMajor) + "." +
                     std::to_string(format::kFormatMinor);
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

bool NeedsCuda(const std::string& info) {
  return info.find(";cuda=") != std::string::npos;
}

Compatibility CheckCompatibility(const std::string& info, const DeviceDescription& device) {
  Compatibility c;
  auto fields = Split(info, ';');
  if (fields.empty() || fields[0] != "ortc") return c;  // not ours
  std::map<std::string, std::string> kv;
  for (size_t i = 1; i < fields.size(); ++i) {
    auto eq = fields[i].find('=');
    if (eq != std::string::npos) kv[fields[i].substr(0, eq)] = fields[i].substr(eq + 1);
  }
  const std::string want_major = std::to_string(format::kFormatMajor);
  const std::string format = kv.count("format") ? kv["format"] : "";
  if (format.substr(0, format.find('.')) != want_major) {
    c.answer = Compatibility::Answer::kUnsupported;
    c.reason = "binary format " + format + "; this runtime reads format " + want_major +
               ".x: recompile with this ortc";
    return c;
  }
  c.answer = Compatibility::Answer::kOptimal;
  auto apply = [&](const Result<BackendVerdict>& v) {
    if (!v.ok()) {
      c.answer = Compatibility::Answer::kUnsupported;
      c.reason = v.status().message();
    } else if (v->verdict == Verdict::kPreferRecompilation &&
               c.answer == Compatibility::Answer::kOptimal) {
      c.answer = Compatibility::Answer::kPreferRecompilation;
      c.reason = v->reason;
    }
  };
  if (kv.count("cpu")) apply(GateCpu(Split(kv["cpu"], ','), device, "ortc cpu binary"));
  if (kv.count("cuda") && c.answer != Compatibility::Answer::kUnsupported) {
    CudaBinaryFacts facts;
    facts.targets = Split(kv["cuda"], ',');
    facts.min_driver = kv.count("cuda_driver") ? std::atoi(kv["cuda_driver"].c_str()) : 0;
    facts.cudnn_version = kv.count("cudnn") ? kv["cudnn"] : "";
    facts.cublas_version = kv.count("cublas") ? kv["cublas"] : "";
    apply(GateCuda(facts, device, "ortc cuda binary"));
  }
  return c;
}

}  // namespace ortc::loader
