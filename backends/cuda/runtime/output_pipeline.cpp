// Chunked output copies (output_pipeline.h).
#include "output_pipeline.h"

#include <algorithm>

namespace ortc::cuda_rt {

OutputPipeline::~OutputPipeline() {
  Reset();
}

void OutputPipeline::Reset() {
  for (auto& list : events_)
    for (CUevent e : list)
      if (e) Driver().cuEventDestroy(e);
  events_.clear();
}

OrtcPluginStatus OutputPipeline::Prepare(const std::vector<uint64_t>& output_bytes) {
  Reset();
  events_.resize(output_bytes.size());
  for (size_t i = 0; i < output_bytes.size(); ++i) {
    const uint64_t chunks = (output_bytes[i] + kChunkBytes - 1) / kChunkBytes;
    if (chunks < 2) continue;
    events_[i].assign(chunks, nullptr);
    for (auto& e : events_[i]) ORTC_CU(Driver().cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
  }
  return ORTC_PLUGIN_OK;
}

OrtcPluginStatus OutputPipeline::Issue(size_t output, uint8_t* staging, CUdeviceptr src,
                                       uint64_t bytes, CUstream stream) const {
  const auto& events = events_[output];
  for (size_t k = 0; k < events.size(); ++k) {
    const uint64_t begin = std::min(bytes, k * kChunkBytes);
    const uint64_t n = std::min(bytes - begin, kChunkBytes);
    if (n) ORTC_CU(Driver().cuMemcpyDtoHAsync(staging + begin, src + begin, n, stream));
    ORTC_CU(Driver().cuEventRecord(events[k], stream));
  }
  return ORTC_PLUGIN_OK;
}

OrtcPluginStatus OutputPipeline::Drain(size_t output, uint8_t* dst, const uint8_t* staging,
                                       uint64_t bytes, HostCopyPool& copies) const {
  const auto& events = events_[output];
  for (size_t k = 0; k < events.size(); ++k) {
    ORTC_CU(Driver().cuEventSynchronize(events[k]));
    const uint64_t begin = std::min(bytes, k * kChunkBytes);
    copies.Copy(dst + begin, staging + begin, std::min(bytes - begin, kChunkBytes));
  }
  return ORTC_PLUGIN_OK;
}

}  // namespace ortc::cuda_rt
