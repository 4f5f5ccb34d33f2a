// QLinearConv through oneDNN's int8 convolution: one plan per input shape and quantization
// parameters (scales and zero points are part of the primitive), weights reordered once.
#include <cstring>
#include <oneapi/dnnl/dnnl.hpp>

#include "cpu/runtime/kernels/onednn_conv.h"
#include "cpu/runtime/kernels/onednn_support.h"
#include "cpu_kernel/intra_op_threads.h"

namespace ortc::exec {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

struct QuantizedPlan {
  dnnl::convolution_forward prim;
  memory::desc src_plain, src_md, dst_plain, dst_md, wei_md, bias_md, scratch_md;
  dnnl::reorder src_in, dst_out;
  memory weights;  // reordered once (constant weights) or per run
  memory::desc wei_plain;
  bool constant_weights = false;
  int threads = 1;  // made for this many (ThreadsForWork), and run with as many
};

// int8 multiply-adds run about four to one fp32 multiply-add (VNNI), which is what
// ThreadsForWork counts in.
int QuantizedConvThreads(const ConvGeometry& g) {
  return ThreadsForWork(ConvMultiplyAdds(g) / 4);
}

memory::dims Dims(const std::vector<int64_t>& v) {
  return memory::dims(v.begin(), v.end());
}

std::shared_ptr<QuantizedPlan> MakePlan(const ConvGeometry& g, const QuantizedConvParams& q,
                                        bool has_bias, const int8_t* constant_w) {
  const dnnl::engine& eng = OneDnnEngine();
  auto plan = std::make_shared<QuantizedPlan>();
  plan->threads = QuantizedConvThreads(g);
  const ScopedIntraOpThreads scope(plan->threads);
  const ConvTensorDims d = DimsOf(g);
  const dt src_type = q.x_signed ? dt::s8 : dt::u8, dst_type = q.y_signed ? dt::s8 : dt::u8;
  plan->src_plain = memory::desc(d.src, src_type, d.src_tag);
  plan->dst_plain = memory::desc(d.dst, dst_type, d.dst_tag);
  plan->wei_plain = memory::desc(d.wei, dt::s8, d.wei_tag);
  plan->bias_md = memory::desc({g.out_channels}, dt::s32, tag::x);
  std::vector<int64_t> dil(g.dilations);
  for (auto& d : dil) d -= 1;
  dnnl::convolution_forward::desc desc(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
      memory::desc(d.src, src_type, tag::any), memory::desc(d.wei, dt::s8, tag::any),
      has_bias ? plan->bias_md : memory::desc(), memory::desc(d.dst, dst_type, tag::any),
      Dims(g.strides), Dims(dil), Dims(g.pads_begin), Dims(g.pads_end));
  dnnl::primitive_attr attr;
  // Per output channel: the mask names dimension 1 (output channels; with groups, the product
  // of dimensions 0 and 1 of the weights, which oneDNN maps onto the output channels too).
  attr.set_output_scales(q.scales.size() == 1 ? 0 : 1 << 1, q.scales);
  if (q.x_zero != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {q.x_zero});
  if (q.y_zero != 0) attr.set_zero_points(DNNL_ARG_DST, 0, {q.y_zero});
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::convolution_forward::primitive_desc pd(desc, attr, eng);
  plan->prim = dnnl::convolution_forward(pd);
  plan->src_md = pd.src_desc();
  plan->dst_md = pd.dst_desc();
  plan->wei_md = pd.weights_desc();
  plan->scratch_md = pd.scratchpad_desc();
  if (plan->src_md != plan->src_plain)
    plan->src_in = dnnl::reorder(memory(plan->src_plain, eng), memory(plan->src_md, eng));
  if (plan->dst_md != plan->dst_plain)
    plan->dst_out = dnnl::reorder(memory(plan->dst_md, eng), memory(plan->dst_plain, eng));
  if (constant_w) {
    plan->weights = memory(plan->wei_md, eng);
    memory from(plan->wei_plain, eng, const_cast<int8_t*>(constant_w));
    dnnl::stream& s = OneDnnStream();
    dnnl::reorder(from, plan->weights).execute(s, from, plan->weights);
    s.wait();
    plan->constant_weights = true;
  }
  return plan;
}

// The plan's key: the input shape and every quantization parameter baked into the primitive.
std::vector<int64_t> KeyOf(const ConvGeometry& g, const QuantizedConvParams& q, bool bias_present) {
  // Everything the plan was made for: the weights' shape and the bias too, since weights that
  // are not constant may change shape between runs (a plan for others wrote past y).
  std::vector<int64_t> key = {g.batch,  g.in_channels, g.out_channels, q.x_zero,
                              q.y_zero, q.x_signed,    q.y_signed,     bias_present};
  key.insert(key.end(), g.in.begin(), g.in.end());
  key.insert(key.end(), g.kernel.begin(), g.kernel.end());
  for (float s : q.scales) {
    int32_t bits;
    std::memcpy(&bits, &s, sizeof bits);
    key.push_back(bits);
  }
  return key;
}

// Whether oneDNN's int8 convolution is exact for these weights in this process. With VNNI
// (AVX512-VNNI, AVX-VNNI, AMX) products are summed straight into int32. Without it the kernels
// multiply u8 by s8 with vpmaddubsw, which adds pairs of products into int16 with saturation
// (signed inputs are shifted to u8 first): 255 * (|w_a| + |w_b|) fits int16 only while every
// |w| <= 64, so wider weights would give wrong results, not slow ones.
bool ExactForWeights(const int8_t* w, int64_t count) {
  const auto effective = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  auto has = [&](dnnl::cpu_isa isa) {
    return (effective & static_cast<unsigned>(isa)) == static_cast<unsigned>(isa);
  };
  if (has(dnnl::cpu_isa::avx512_core_vnni) || has(dnnl::cpu_isa::avx2_vnni)) return true;
  for (int64_t i = 0; i < count; ++i)
    if (w[i] > 64 || w[i] < -64) return false;
  return true;
}

}  // namespace

Status OneDnnQuantizedConv(const ExecOp& op, OneDnnConvCache* cache, const ConvGeometry& g,
                           const QuantizedConvParams& q, const void* x, const int8_t* w,
                           const int32_t* bias, void* y, bool* handled) {
  *handled = false;
  if (!cache || g.in.empty() || g.in.size() > 3) return Status::Ok();
  int64_t w_count = g.out_channels * (g.in_channels / g.group);
  for (int64_t k : g.kernel) w_count *= k;
  if (!ExactForWeights(w, w_count)) return Status::Ok();  // the caller's exact loops run
  const std::vector<int64_t> key = KeyOf(g, q, bias != nullptr);
  const auto plan = std::static_pointer_cast<const QuantizedPlan>(FindOrMakePlan(cache, key, [&] {
    return MakePlan(g, q, bias != nullptr, cache->weights_constant ? w : nullptr);
  }));
  if (!plan) return Status::Ok();
  const ScopedIntraOpThreads threads(plan->threads);
  try {
    const dnnl::engine& eng = OneDnnEngine();
    dnnl::stream& s = OneDnnStream();
    OneDnnScratch& scratch = OneDnnThreadScratch();
    memory src_plain(plan->src_plain, eng, const_cast<void*>(x)), src = src_plain;
    if (plan->src_md != plan->src_plain) {
      src = memory(plan->src_md, eng, scratch.src.Get(plan->src_md.get_size()));
      plan->src_in.execute(s, src_plain, src);
    }
    memory dst_plain(plan->dst_plain, eng, y), dst = dst_plain;
    if (plan->dst_md != plan->dst_plain)
      dst = memory(plan->dst_md, eng, scratch.dst.Get(plan->dst_md.get_size()));
    memory wei = plan->weights;
    if (!plan->constant_weights) {
      memory from(plan->wei_plain, eng, const_cast<int8_t*>(w));
      wei = memory(plan->wei_md, eng, scratch.weights.Get(plan->wei_md.get_size()));
      dnnl::reorder(from, wei).execute(s, from, wei);
    }
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, src},
        {DNNL_ARG_WEIGHTS, wei},
        {DNNL_ARG_DST, dst},
        {DNNL_ARG_SCRATCHPAD,
         memory(plan->scratch_md, eng, scratch.pad.Get(plan->scratch_md.get_size()))}};
    if (bias) args[DNNL_ARG_BIAS] = memory(plan->bias_md, eng, const_cast<int32_t*>(bias));
    plan->prim.execute(s, args);
    if (plan->dst_md != plan->dst_plain) plan->dst_out.execute(s, dst, dst_plain);
    s.wait();
  } catch (const dnnl::error& e) {
    return Status(StatusCode::kEpFail, "oneDNN failed to run the quantized convolution of node '" +
                                           op.name + "': " + e.what());
  }
  *handled = true;
  return Status::Ok();
}

}  // namespace ortc::exec
