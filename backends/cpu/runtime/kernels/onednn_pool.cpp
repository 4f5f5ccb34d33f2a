// Channels-last pooling through oneDNN: one primitive per input shape, kept on the op.
#include <oneapi/dnnl/dnnl.hpp>

#include "cpu/runtime/kernels/onednn_conv.h"
#include "cpu/runtime/kernels/onednn_support.h"
#include "cpu_kernel/intra_op_threads.h"

namespace ortc::exec {
namespace {

using dnnl::memory;

struct PoolPlan {
  dnnl::pooling_forward prim;
  memory::desc src, dst, scratch;
  int threads = 1;  // made for this many (ThreadsForWork), and run with as many
};

// A window's cells count as multiply-adds: each is a load and a max or an add.
int PoolThreads(const PoolGeometry& g) {
  double work = static_cast<double>(g.batch) * static_cast<double>(g.channels);
  for (int64_t o : g.out) work *= static_cast<double>(o);
  for (int64_t k : g.kernel) work *= static_cast<double>(k);
  return ThreadsForWork(work);
}

memory::dims Dims(const std::vector<int64_t>& v) {
  return memory::dims(v.begin(), v.end());
}

// The plan, or nullptr when oneDNN's pooling differs from ONNX's for this window: its padding
// on the right must make (in + begin + end - kernel) / stride + 1 the output size, and an
// average counting padding must not count the cells a ceil_mode window adds past pads_end.
std::shared_ptr<PoolPlan> MakePlan(const PoolGeometry& g) {
  std::vector<int64_t> pads_end(2);
  for (int d = 0; d < 2; ++d) {
    pads_end[d] = std::max(g.pads_end[d],
                           (g.out[d] - 1) * g.strides[d] + g.kernel[d] - g.in[d] - g.pads_begin[d]);
    if ((g.in[d] + g.pads_begin[d] + pads_end[d] - g.kernel[d]) / g.strides[d] + 1 != g.out[d])
      return nullptr;
    if (!g.max && g.count_include_pad && pads_end[d] != g.pads_end[d]) return nullptr;
  }
  auto plan = std::make_shared<PoolPlan>();
  plan->threads = PoolThreads(g);
  const ScopedIntraOpThreads scope(plan->threads);
  using tag = memory::format_tag;
  plan->src =
      memory::desc({g.batch, g.channels, g.in[0], g.in[1]}, memory::data_type::f32, tag::nhwc);
  plan->dst =
      memory::desc({g.batch, g.channels, g.out[0], g.out[1]}, memory::data_type::f32, tag::nhwc);
  const auto algorithm = g.max                 ? dnnl::algorithm::pooling_max
                         : g.count_include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                               : dnnl::algorithm::pooling_avg_exclude_padding;
  dnnl::pooling_forward::desc desc(dnnl::prop_kind::forward_inference, algorithm, plan->src,
                                   plan->dst, Dims(g.strides), Dims(g.kernel), Dims(g.pads_begin),
                                   Dims(pads_end));
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::pooling_forward::primitive_desc pd(desc, attr, OneDnnEngine());
  plan->prim = dnnl::pooling_forward(pd);
  plan->scratch = pd.scratchpad_desc();
  return plan;
}

}  // namespace

Status OneDnnPoolNhwc(const ExecOp& op, OneDnnPlanCache* cache, const PoolGeometry& g,
                      const float* x, float* y, bool* handled) {
  *handled = false;
  if (!cache || g.in.size() != 2) return Status::Ok();
  const std::vector<int64_t> key = {g.batch, g.channels, g.in[0], g.in[1]};
  const auto plan = std::static_pointer_cast<const PoolPlan>(
      FindOrMakePlan(cache, key, [&] { return MakePlan(g); }));
  if (!plan) return Status::Ok();
  const ScopedIntraOpThreads threads(plan->threads);
  try {
    const dnnl::engine& eng = OneDnnEngine();
    dnnl::stream& s = OneDnnStream();
    memory src(plan->src, eng, const_cast<float*>(x)), dst(plan->dst, eng, y),
        scratch(plan->scratch, eng, OneDnnThreadScratch().pad.Get(plan->scratch.get_size()));
    plan->prim.execute(s,
                       {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratch}});
    s.wait();
  } catch (const dnnl::error& e) {
    return Status(StatusCode::kEpFail,
                  "oneDNN failed to run the pooling of node '" + op.name + "': " + e.what());
  }
  *handled = true;
  return Status::Ok();
}

}  // namespace ortc::exec
