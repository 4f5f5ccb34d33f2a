// Page-locked host memory for a graph instance's input and output copies: a run copies host
// tensors through it so the device copies are truly asynchronous. When the driver refuses pinned
// memory, runs copy from and to the caller's (pageable) memory instead and the reason is kept.
#pragma once

#include <cstdint>
#include <string>

#include "device_info.h"

namespace ortc::cuda_rt {

class HostStaging {
 public:
  HostStaging() = default;
  ~HostStaging();
  HostStaging(const HostStaging&) = delete;
  HostStaging& operator=(const HostStaging&) = delete;

  // Allocates `bytes` (0: nothing); false with `why` when the driver refuses.
  bool Allocate(uint64_t bytes, std::string* why);
  void Reset();
  uint8_t* at(uint64_t offset) const { return data_ ? data_ + offset : nullptr; }
  bool pinned() const { return data_ != nullptr; }
  uint64_t bytes() const { return bytes_; }

 private:
  uint8_t* data_ = nullptr;
  uint64_t bytes_ = 0;
};

}  // namespace ortc::cuda_rt
