// The gate's verdict on a compatibility string: see compatibility_check.h.
#include "loader/compatibility_check.h"

#include "context_binary_format.h"
#include "loader/version_gate.h"

namespace ortc::loader {

Compatibility CheckCompatibility(const std::string& info, const DeviceDescription& device) {
  Compatibility c;
  const format::ParsedCompatibility parsed = format::ParseCompatibilityInfo(info);
  if (!parsed.ours) return c;
  const std::string want_major = std::to_string(format::kFormatMajor);
  const std::string& format = parsed.format;
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
  if (parsed.has_cpu) apply(GateCpu(parsed.cpu_targets, device, "ortc cpu binary"));
  if (parsed.has_cuda && c.answer != Compatibility::Answer::kUnsupported)
    apply(GateCuda(parsed.cuda, device, "ortc cuda binary"));
  // A plugin backend's binary: its plugin must be here, and judges the facts the string carries.
  for (const auto& b : parsed.plugins) {
    if (c.answer == Compatibility::Answer::kUnsupported) break;
    PluginBinaryFacts facts;
    facts.versions = b.versions;
    facts.hardware_targets = b.hardware_targets;
    apply(GatePluginFacts(b.backend, facts, "ortc " + b.backend + " binary"));
  }
  return c;
}

}  // namespace ortc::loader

namespace ortc {

CompatibilityVerdict CheckCompatibilityInfo(const std::string& info,
                                            const DeviceDescription* device) {
  using Answer = loader::Compatibility::Answer;
  // Detecting CUDA loads its backend library: only for a string that names a CUDA binary.
  const loader::Compatibility c =
      device                    ? loader::CheckCompatibility(info, *device)
      : format::NeedsCuda(info) ? loader::CheckCompatibility(info, DeviceDescription::Detect())
                                : loader::CheckCompatibility(info, DeviceDescription::DetectHost());
  CompatibilityVerdict v;
  v.applicable = c.answer != Answer::kNotApplicable;
  v.verdict = c.answer == Answer::kUnsupported           ? Verdict::kUnsupported
              : c.answer == Answer::kPreferRecompilation ? Verdict::kPreferRecompilation
                                                         : Verdict::kOptimal;
  v.reason = c.reason;
  return v;
}

}  // namespace ortc
