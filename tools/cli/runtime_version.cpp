#include "cli/runtime_version.h"

#include "context_binary_format.h"
#include "ortc/runtime.h"
#include "plugin_abi/ortc_backend_plugin.h"

namespace ortc::cli {

std::string RuntimeVersionLines() {
  std::string t = "context binary format " + std::to_string(format::kFormatMajor) + "." +
                  std::to_string(format::kFormatMinor) + ", backend plugin ABI " +
                  std::to_string(ORTC_BACKEND_ABI_VERSION) + "\n";
  const CpuKernelLibrary cpu = DescribeCpuKernelLibrary();
  const std::string& isa = cpu.isa;
  t += "cpu: " + cpu.name + " " + cpu.version + ", code for " +
       (isa.empty() ? std::string("an ISA older than avx2") : isa) + " on this machine\n";
  const DeviceDescription d = DeviceDescription::Detect();
  const auto driver = d.cuda_driver_version;
  t += "cuda run on this machine: ";
  t += driver > 0 ? "driver " + std::to_string(driver / 1000) + "." +
                        std::to_string((driver % 1000) / 10) +
                        (d.cuda_archs.empty() ? ", no device" : ", device " + d.cuda_archs[0])
                  : "no driver (" + d.cuda_unavailable_reason + ")";
  t += "; cuDNN " + (d.cudnn_version.empty() ? "not found" : d.cudnn_version);
  t += "; cuBLAS " + (d.cublas_version.empty() ? "not found" : d.cublas_version);
  return t;
}

}  // namespace ortc::cli
