// cuMemHostAlloc / cuMemFreeHost of the staging buffer.
#include "host_staging.h"

namespace ortc::cuda_rt {

HostStaging::~HostStaging() {
  Reset();
}

void HostStaging::Reset() {
  if (data_) Driver().cuMemFreeHost(data_);
  data_ = nullptr;
  bytes_ = 0;
}

bool HostStaging::Allocate(uint64_t bytes, std::string* why) {
  if (bytes == 0) return true;
  void* p = nullptr;
  const CUresult r = Driver().cuMemHostAlloc(&p, bytes, 0);
  if (r != CUDA_SUCCESS) {
    *why = CuText(r, "cuMemHostAlloc") + " for " + std::to_string(bytes) + " bytes";
    return false;
  }
  data_ = static_cast<uint8_t*>(p);
  bytes_ = bytes;
  return true;
}

}  // namespace ortc::cuda_rt
