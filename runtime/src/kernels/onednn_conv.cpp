// oneDNN convolution: plan (primitive + layouts) per input shape, weights reordered once.
#include "kernels/onednn_conv.h"

#include <algorithm>
#include <cstring>
#include <oneapi/dnnl/dnnl.hpp>

#include "kernels/onednn_support.h"

namespace ortc::exec {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

struct ConvPlan {
  dnnl::convolution_forward prim;
  memory::desc src_plain, src_md, dst_plain, dst_md, wei_plain, wei_md, bias_md, scratch_md;
  dnnl::reorder src_in, dst_in, dst_out, wei_in;  // layout changes, where the layouts differ
  memory packed_weights;                          // constant weights, reordered once
  bool has_packed = false;
};

memory::dims Dims(const std::vector<int64_t>& v) {
  return memory::dims(v.begin(), v.end());
}

tag PlainActivationTag(size_t spatial, bool channels_last) {
  if (channels_last) return tag::nhwc;
  return spatial == 1 ? tag::ncw : spatial == 2 ? tag::nchw : tag::ncdhw;
}
tag PlainWeightTag(size_t spatial, bool grouped) {
  if (grouped) return spatial == 1 ? tag::goiw : spatial == 2 ? tag::goihw : tag::goidhw;
  return spatial == 1 ? tag::oiw : spatial == 2 ? tag::oihw : tag::oidhw;
}

std::shared_ptr<ConvPlan> MakePlan(const ConvGeometry& g, bool has_bias, bool has_residual,
                                   const FusedActivation& act, const float* constant_w) {
  const dnnl::engine& eng = OneDnnEngine();
  const size_t nsp = g.in.size();
  auto plan = std::make_shared<ConvPlan>();
  std::vector<int64_t> src = {g.batch, g.in_channels}, dst = {g.batch, g.out_channels}, wei;
  src.insert(src.end(), g.in.begin(), g.in.end());
  dst.insert(dst.end(), g.out.begin(), g.out.end());
  const bool grouped = g.group > 1;
  if (grouped)
    wei = {g.group, g.out_channels / g.group, g.in_channels / g.group};
  else
    wei = {g.out_channels, g.in_channels};
  wei.insert(wei.end(), g.kernel.begin(), g.kernel.end());
  plan->src_plain = memory::desc(Dims(src), dt::f32, PlainActivationTag(nsp, g.channels_last));
  plan->dst_plain = memory::desc(Dims(dst), dt::f32, PlainActivationTag(nsp, g.channels_last));
  plan->wei_plain = memory::desc(Dims(wei), dt::f32, PlainWeightTag(nsp, grouped));
  plan->bias_md = memory::desc({g.out_channels}, dt::f32, tag::x);
  std::vector<int64_t> dil(g.dilations);
  for (auto& d : dil) d -= 1;  // oneDNN counts the gaps between taps
  const dt compute = g.bf16 ? dt::bf16 : dt::f32;
  const memory::desc any_src(Dims(src), compute, tag::any), any_dst(Dims(dst), dt::f32, tag::any),
      any_wei(Dims(wei), compute, tag::any);
  dnnl::convolution_forward::desc desc(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, any_src, any_wei,
      has_bias ? plan->bias_md : memory::desc(), any_dst, Dims(g.strides), Dims(dil),
      Dims(g.pads_begin), Dims(g.pads_end));
  dnnl::post_ops ops;
  if (has_residual) ops.append_sum(1.f);
  AppendActivation(act, &ops);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::convolution_forward::primitive_desc pd(desc, attr, eng);
  plan->prim = dnnl::convolution_forward(pd);
  plan->src_md = pd.src_desc();
  plan->dst_md = pd.dst_desc();
  plan->wei_md = pd.weights_desc();
  plan->scratch_md = pd.scratchpad_desc();
  if (plan->src_md != plan->src_plain)
    plan->src_in = dnnl::reorder(memory(plan->src_plain, eng), memory(plan->src_md, eng));
  if (plan->dst_md != plan->dst_plain) {
    plan->dst_out = dnnl::reorder(memory(plan->dst_md, eng), memory(plan->dst_plain, eng));
    if (has_residual)
      plan->dst_in = dnnl::reorder(memory(plan->dst_plain, eng), memory(plan->dst_md, eng));
  }
  if (plan->wei_md != plan->wei_plain)
    plan->wei_in = dnnl::reorder(memory(plan->wei_plain, eng), memory(plan->wei_md, eng));
  if (constant_w) {
    plan->packed_weights = memory(plan->wei_md, eng);
    memory plain(plan->wei_plain, eng, const_cast<float*>(constant_w));
    if (plan->wei_md != plan->wei_plain) {
      dnnl::stream& s = OneDnnStream();
      plan->wei_in.execute(s, plain, plan->packed_weights);
      s.wait();
    } else {
      std::memcpy(plan->packed_weights.get_data_handle(), constant_w, plan->wei_md.get_size());
    }
    plan->has_packed = true;
  }
  return plan;
}

}  // namespace

Status OneDnnConv(const ExecOp& op, OneDnnConvCache* cache, const ConvGeometry& g, const float* x,
                  const float* w, const float* bias, const float* residual,
                  const FusedActivation& act, float* y, bool* handled) {
  *handled = false;
  if (!cache || g.in.empty() || g.in.size() > 3 || (g.channels_last && g.in.size() != 2))
    return Status::Ok();
  std::vector<int64_t> key = {g.batch, g.in_channels};
  key.insert(key.end(), g.in.begin(), g.in.end());
  std::shared_ptr<const ConvPlan> plan;
  {
    std::lock_guard<std::mutex> lock(cache->mu);
    for (const auto& [k, p] : cache->plans)
      if (k == key) plan = std::static_pointer_cast<const ConvPlan>(p);
    if (!plan) {
      try {
        plan = MakePlan(g, bias != nullptr, residual != nullptr, act,
                        cache->weights_constant ? w : nullptr);
      } catch (const dnnl::error&) {
        plan = nullptr;  // oneDNN has no implementation: remember that and use our own loops
      }
      cache->plans.emplace_back(key, plan);
    }
  }
  if (!plan) return Status::Ok();
  try {
    const dnnl::engine& eng = OneDnnEngine();
    dnnl::stream& s = OneDnnStream();
    OneDnnScratch& scratch = OneDnnThreadScratch();
    memory src(plan->src_plain, eng, const_cast<float*>(x));
    if (plan->src_md != plan->src_plain) {
      memory blocked(plan->src_md, eng, scratch.src.Get(plan->src_md.get_size()));
      plan->src_in.execute(s, src, blocked);
      src = blocked;
    }
    memory dst_plain(plan->dst_plain, eng, y);
    memory dst = dst_plain;
    const bool dst_blocked = plan->dst_md != plan->dst_plain;
    if (dst_blocked) dst = memory(plan->dst_md, eng, scratch.dst.Get(plan->dst_md.get_size()));
    if (residual) {
      // The sum post-op adds what dst holds: put the residual there first.
      if (dst_blocked) {
        memory res(plan->dst_plain, eng, const_cast<float*>(residual));
        plan->dst_in.execute(s, res, dst);
      } else if (residual != y) {
        std::memcpy(y, residual, plan->dst_plain.get_size());
      }
    }
    memory wei;
    if (plan->has_packed) {
      wei = plan->packed_weights;
    } else {
      wei = memory(plan->wei_plain, eng, const_cast<float*>(w));
      if (plan->wei_md != plan->wei_plain) {
        memory packed(plan->wei_md, eng, scratch.weights.Get(plan->wei_md.get_size()));
        plan->wei_in.execute(s, wei, packed);
        wei = packed;
      }
    }
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}};
    if (bias) args[DNNL_ARG_BIAS] = memory(plan->bias_md, eng, const_cast<float*>(bias));
    args[DNNL_ARG_SCRATCHPAD] =
        memory(plan->scratch_md, eng, scratch.pad.Get(plan->scratch_md.get_size()));
    plan->prim.execute(s, args);
    if (dst_blocked) plan->dst_out.execute(s, dst, dst_plain);
    s.wait();
  } catch (const dnnl::error& e) {
    return Status(StatusCode::kEpFail,
                  "oneDNN failed to run the convolution of node '" + op.name + "': " + e.what());
  }
  *handled = true;
  return Status::Ok();
}

}  // namespace ortc::exec
