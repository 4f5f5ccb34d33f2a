// Large host outputs leave the device in chunks, an event after each, so the host copies chunk k
// out of the pinned staging buffer (host_copy.h) while the bus still moves chunk k + 1: the run
// then costs the bus time plus one chunk's copy, not the bus time plus the whole copy (an LM's
// [1, 128] logits: 16-26 MB). Events are created at load; a run creates nothing.
#pragma once

#include <cstdint>
#include <vector>

#include "device_info.h"
#include "host_copy.h"

namespace ortc::cuda_rt {

class OutputPipeline {
 public:
  static constexpr uint64_t kChunkBytes = uint64_t{4} << 20;

  OutputPipeline() = default;
  ~OutputPipeline();
  OutputPipeline(const OutputPipeline&) = delete;
  OutputPipeline& operator=(const OutputPipeline&) = delete;

  // Events for each output of at least two chunks (the others are copied whole).
  OrtcPluginStatus Prepare(const std::vector<uint64_t>& output_bytes);
  bool pipelined(size_t output) const {
    return output < events_.size() && !events_[output].empty();
  }
  size_t chunks(size_t output) const { return pipelined(output) ? events_[output].size() : 0; }

  // Issues the output's device-to-staging copy chunk by chunk, recording an event after each.
  OrtcPluginStatus Issue(size_t output, uint8_t* staging, CUdeviceptr src, uint64_t bytes,
                         CUstream stream) const;
  // Waits for each chunk in turn and copies it from staging to `dst`.
  OrtcPluginStatus Drain(size_t output, uint8_t* dst, const uint8_t* staging, uint64_t bytes,
                         HostCopyPool& copies) const;

 private:
  void Reset();
  std::vector<std::vector<CUevent>> events_;  // per output: one per chunk, or none
};

}  // namespace ortc::cuda_rt
