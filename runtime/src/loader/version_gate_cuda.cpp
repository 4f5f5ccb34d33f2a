// The CUDA part of the version gate: driver presence and version, the module the device can run
// (cubin, compatible cubin, PTX JIT) and the cuDNN / cuBLAS majors the programs were planned for.
#include <algorithm>
#include <cstdlib>

#include "cuda_binary_keys.h"
#include "loader/version_gate.h"

namespace ortc::loader {
namespace {

struct Arch {
  int major = -1, minor = -1;
  bool specific = false;  // "sm_90a": runs on exactly that arch only
  bool ok() const { return major >= 0; }
  int value() const { return major * 10 + minor; }
};

// "sm_86" / "compute_90" (after its prefix) -> 8.6 / 9.0.
Arch ParseArch(const std::string& text, const std::string& prefix) {
  Arch a;
  if (text.rfind(prefix, 0) != 0) return a;
  std::string digits = text.substr(prefix.size());
  if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) {
    a.specific = digits.back() == 'a';
    digits.pop_back();
  }
  if (digits.size() < 2 || digits.size() > 3 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return a;
  const int v = std::atoi(digits.c_str());
  a.major = v / 10;
  a.minor = v % 10;
  return a;
}

std::string DriverText(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10) + " (" +
         std::to_string(v) + ")";
}

int MajorOf(const std::string& version) {
  return version.empty() ? -1 : std::atoi(version.c_str());
}

// The binary does not fit this device (architecture, driver or library versions): the model is
// not supported as asked here; recompiling for the device, or updating it, helps.
Status Unsupported(const std::string& where, const std::string& why) {
  return NotImplemented(where + ": verdict unsupported: " + why);
}

// What the backend needs is not there (no driver, no device, a library missing): the machine's
// set-up, not the bundle, is at fault.
Status Unavailable(const std::string& where, const std::string& why) {
  return Status(StatusCode::kEpFail, where + ": verdict unsupported: " + why);
}

// The library check: needed (recorded) -> present with the same major.
Status CheckLibrary(const std::string& where, const std::string& lib, const std::string& built,
                    const std::string& have, const std::string& reason) {
  if (built.empty()) return Status::Ok();
  if (have.empty()) {
    return Unavailable(where, "the binary calls " + lib + " " + built + " but " + lib +
                                  " was not found" + (reason.empty() ? "" : " (" + reason + ")") +
                                  ": install " + lib + " " + std::to_string(MajorOf(built)));
  }
  if (MajorOf(built) != MajorOf(have)) {
    return Unsupported(where, "built against " + lib + " " + built + "; this machine has " + lib +
                                  " " + have + ": install " + lib + " " +
                                  std::to_string(MajorOf(built)) + " or recompile here");
  }
  return Status::Ok();
}

}  // namespace

Result<BackendVerdict> GateCuda(const CudaBinaryFacts& bin, const DeviceDescription& device,
                                const std::string& where) {
  BackendVerdict v;
  v.backend = cuda_keys::kBackend;
  if (device.cuda_driver_version <= 0) {
    // The plugin's reason reads "no CUDA driver found (libcuda.so.1: ...)"; other reasons
    // (the plugin itself missing) are given as they are.
    const std::string& r = device.cuda_unavailable_reason;
    return Unavailable(where, r.empty() ? "no CUDA driver found" : r);
  }
  if (bin.min_driver > 0 && device.cuda_driver_version < bin.min_driver) {
    return Unsupported(where, "the binary needs CUDA driver " + DriverText(bin.min_driver) +
                                  " or newer; this machine has " +
                                  DriverText(device.cuda_driver_version) + ": update the driver");
  }
  if (device.cuda_archs.empty()) {
    return Unavailable(
        where, "no CUDA device found" + (device.cuda_unavailable_reason.empty()
                                             ? std::string()
                                             : " (" + device.cuda_unavailable_reason + ")"));
  }
  const std::string& dev_text = device.cuda_archs.front();
  const Arch dev = ParseArch(dev_text, cuda_keys::kCubinPrefix);
  if (!dev.ok()) return InvalidArgument(where + ": device arch '" + dev_text + "' is not sm_XY");

  std::string compiled, exact, same_major, ptx;
  Arch best_same{}, best_ptx{};
  for (const auto& t : bin.targets) {
    compiled += (compiled.empty() ? "" : ", ") + t;
    const Arch cubin = ParseArch(t, cuda_keys::kCubinPrefix);
    const Arch p = ParseArch(t, cuda_keys::kPtxPrefix);
    if (cubin.ok() && cubin.major == dev.major && cubin.minor == dev.minor &&
        (!cubin.specific || dev_text == t)) {
      exact = t;
    } else if (cubin.ok() && !cubin.specific && cubin.major == dev.major &&
               cubin.minor < dev.minor && cubin.value() > best_same.value()) {
      best_same = cubin;
      same_major = t;
    } else if (p.ok() && !p.specific && p.value() <= dev.value() && p.value() > best_ptx.value()) {
      best_ptx = p;
      ptx = t;
    }
  }
  const std::string recompile = "recompile with --target-arch sm_" + std::to_string(dev.value());
  if (!exact.empty()) {
    v.verdict = Verdict::kOptimal;
  } else if (!same_major.empty()) {
    v.verdict = Verdict::kPreferRecompilation;
    v.reason = "runs the " + same_major + " cubin on this " + dev_text + " GPU; " + recompile +
               " for code built for it";
  } else if (!ptx.empty()) {
    v.verdict = Verdict::kPreferRecompilation;
    v.reason = "JIT from PTX " + ptx + " on this " + dev_text + " GPU; " + recompile;
  } else {
    return Unsupported(where, "compiled for " + (compiled.empty() ? "no CUDA arch" : compiled) +
                                  " only; this GPU is " + dev_text + ": " + recompile);
  }
  ORTC_RETURN_IF_ERROR(
      CheckLibrary(where, "cuDNN", bin.cudnn_version, device.cudnn_version, device.cudnn_reason));
  ORTC_RETURN_IF_ERROR(CheckLibrary(where, "cuBLAS", bin.cublas_version, device.cublas_version,
                                    device.cublas_reason));
  return v;
}

}  // namespace ortc::loader
