// oneDNN engine, streams, scratch buffers and activation post-ops.
#include "cpu/runtime/kernels/onednn_support.h"

#include <cstdlib>

#include "cpu/runtime/kernels/onednn_conv.h"

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

std::shared_ptr<const void> FindOrMakePlan(
    OneDnnPlanCache* cache, const std::vector<int64_t>& key,
    const std::function<std::shared_ptr<const void>()>& make) {
  constexpr size_t kMaxPlans = 8;
  std::lock_guard<std::mutex> lock(cache->mu);
  // Most recent first: a model run at one size finds its plan at once.
  for (auto it = cache->plans.rbegin(); it != cache->plans.rend(); ++it)
    if (it->first == key) return it->second;
  std::shared_ptr<const void> plan;
  try {
    plan = make();
  } catch (const dnnl::error&) {
    plan = nullptr;
  }
  if (cache->plans.size() >= kMaxPlans) cache->plans.erase(cache->plans.begin());
  cache->plans.emplace_back(key, plan);
  return plan;
}

ConvTensorDims DimsOf(const ConvGeometry& g) {
  using tag = dnnl::memory::format_tag;
  const size_t nsp = g.in.size();
  ConvTensorDims d;
  d.src = {g.batch, g.in_channels};
  d.dst = {g.batch, g.out_channels};
  d.src.insert(d.src.end(), g.in.begin(), g.in.end());
  d.dst.insert(d.dst.end(), g.out.begin(), g.out.end());
  const bool grouped = g.group > 1;
  if (grouped)
    d.wei = {g.group, g.out_channels / g.group, g.in_channels / g.group};
  else
    d.wei = {g.out_channels, g.in_channels};
  d.wei.insert(d.wei.end(), g.kernel.begin(), g.kernel.end());
  auto plain = [&](bool nhwc) {
    if (nhwc) return tag::nhwc;
    return nsp == 1 ? tag::ncw : nsp == 2 ? tag::nchw : tag::ncdhw;
  };
  d.src_tag = plain(g.channels_last && !g.input_nchw);
  d.dst_tag = plain(g.channels_last);
  if (grouped)
    d.wei_tag = nsp == 1 ? tag::goiw : nsp == 2 ? tag::goihw : tag::goidhw;
  else
    d.wei_tag = nsp == 1 ? tag::oiw : nsp == 2 ? tag::oihw : tag::oidhw;
  return d;
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
