// What every oneDNN kernel shares: the CPU engine, a stream per calling thread, per-thread
// scratch buffers (layout copies and the primitives' scratchpads, so concurrent runs never share
// one), and the mapping of fused activations to post-ops.
#pragma once

#include <cstddef>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>

#include "cpu/runtime/kernels/fused_activation.h"

namespace ortc::exec {

const dnnl::engine& OneDnnEngine();
dnnl::stream& OneDnnStream();

// A 64-byte aligned buffer that grows to the largest size asked for and is then reused.
class ScratchBuffer {
 public:
  void* Get(size_t bytes);

 private:
  struct Free {
    void operator()(void* p) const;
  };
  std::unique_ptr<void, Free> data_;
  size_t size_ = 0;
};

struct OneDnnScratch {
  ScratchBuffer src, dst, weights, pad;
};
OneDnnScratch& OneDnnThreadScratch();

struct ConvGeometry;

// A convolution's tensors as oneDNN sees them: sizes ([N, C, spatial...], weights with a
// leading group dimension when grouped) and the plain layouts the graph holds them in (x and y
// NCHW, or NHWC under channels_last, x NCHW again with input_nchw).
struct ConvTensorDims {
  dnnl::memory::dims src, dst, wei;
  dnnl::memory::format_tag src_tag, dst_tag, wei_tag;
};
ConvTensorDims DimsOf(const ConvGeometry& g);

// Appends act as eltwise post-ops (none for kNone).
void AppendActivation(const FusedActivation& act, dnnl::post_ops* ops);

}  // namespace ortc::exec
