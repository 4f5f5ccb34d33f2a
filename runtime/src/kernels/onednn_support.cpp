// oneDNN engine, streams, scratch buffers and activation post-ops.
#include "kernels/onednn_support.h"

#include <cstdlib>

namespace ortc::exec {

const dnnl::engine& OneDnnEngine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& OneDnnStream() {
  thread_local dnnl::stream stream(OneDnnEngine());
  return stream;
}

void ScratchBuffer::Free::operator()(void* p) const {
  std::free(p);
}

void* ScratchBuffer::Get(size_t bytes) {
  if (bytes == 0) bytes = 64;
  if (bytes > size_) {
    const size_t rounded = (bytes + 63) / 64 * 64;
    data_.reset(std::aligned_alloc(64, rounded));
    if (!data_) throw std::bad_alloc();
    size_ = rounded;
  }
  return data_.get();
}

OneDnnScratch& OneDnnThreadScratch() {
  thread_local OneDnnScratch scratch;
  return scratch;
}

void AppendActivation(const FusedActivation& act, dnnl::post_ops* ops) {
  using K = FusedStep::Kind;
  using A = dnnl::algorithm;
  for (const FusedStep& step : act.steps) {
    switch (step.kind) {
      case K::kRelu:
        ops->append_eltwise(1.f, A::eltwise_relu, 0.f, 0.f);
        break;
      case K::kLeakyRelu:
        ops->append_eltwise(1.f, A::eltwise_relu, step.alpha, 0.f);
        break;
      case K::kClip:
        ops->append_eltwise(1.f, A::eltwise_clip, step.alpha, step.beta);
        break;
      case K::kSigmoid:
        ops->append_eltwise(1.f, A::eltwise_logistic, 0.f, 0.f);
        break;
      case K::kHardSigmoid:
        ops->append_eltwise(1.f, A::eltwise_linear, step.alpha, step.beta);
        ops->append_eltwise(1.f, A::eltwise_clip, 0.f, 1.f);
        break;
      case K::kHardSwish:
        ops->append_eltwise(1.f, A::eltwise_hardswish, 1.f / 6.f, 0.5f);
        break;
      case K::kTanh:
        ops->append_eltwise(1.f, A::eltwise_tanh, 0.f, 0.f);
        break;
      case K::kLinear:
        ops->append_eltwise(1.f, A::eltwise_linear, step.alpha, step.beta);
        break;
    }
  }
}

}  // namespace ortc::exec
