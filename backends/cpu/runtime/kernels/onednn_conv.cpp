// oneDNN convolution: plan (primitive + layouts) per input shape, weights reordered once.
#include "cpu/runtime/kernels/onednn_conv.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <oneapi/dnnl/dnnl.hpp>
#include <tuple>

#include "cpu/runtime/kernels/onednn_support.h"
#include "cpu/runtime/kernels/winograd_bf16.h"
#include "cpu_kernel/intra_op_threads.h"

namespace ortc::exec {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

// The memory objects and argument map of one execution, kept on the plan so a repeated run
// only swaps data pointers (creating them costs more than a small convolution). One set per
// plan, taken by whichever run finds it free; concurrent runs build their own.
struct BoundArgs {
  memory src_plain, src_blocked, dst_plain, dst_blocked, residual, wei_plain, wei_packed, bias,
      scratch;
  std::unordered_map<int, memory> args;
};

struct ConvPlan {
  dnnl::convolution_forward prim;
  memory::desc src_plain, src_md, dst_plain, dst_md, wei_plain, wei_md, bias_md, scratch_md;
  dnnl::reorder src_in, dst_in, dst_out, wei_in;  // layout changes, where the layouts differ
  memory packed_weights;                          // constant weights, reordered once
  std::shared_ptr<void> reordered;                // their bytes, when not read in place
  bool has_packed = false;
  std::vector<int64_t> out_shape;  // of y, in the op's layout
  std::string implementation;      // oneDNN's name for the kernel, e.g. "jit_wino_4x3:avx512_core"
  int threads = 1;                 // made for this many (ThreadsForWork), and run with as many
  // Set for bf16 convolutions ortc's own Winograd kernel runs; the members above are then unused.
  std::shared_ptr<const WinogradBf16Plan> winograd_bf16;
  mutable std::atomic_flag bound_busy = ATOMIC_FLAG_INIT;
  mutable std::unique_ptr<BoundArgs> bound;
};

// Sets m to desc over data, creating it the first time.
void Bind(memory& m, const memory::desc& desc, void* data) {
  if (!m)
    m = memory(desc, OneDnnEngine(), data);
  else
    m.set_data_handle(data);
}

// Runs a plan: layout changes in, the convolution with its post-ops, layout change out.
void Execute(const ConvPlan& plan, BoundArgs& b, const float* x, const void* w, const float* bias,
             const float* residual, float* y) {
  dnnl::stream& s = OneDnnStream();
  OneDnnScratch& scratch = OneDnnThreadScratch();
  Bind(b.src_plain, plan.src_plain, const_cast<float*>(x));
  memory* src = &b.src_plain;
  if (plan.src_md != plan.src_plain) {
    Bind(b.src_blocked, plan.src_md, scratch.src.Get(plan.src_md.get_size()));
    plan.src_in.execute(s, b.src_plain, b.src_blocked);
    src = &b.src_blocked;
  }
  Bind(b.dst_plain, plan.dst_plain, y);
  memory* dst = &b.dst_plain;
  const bool dst_blocked = plan.dst_md != plan.dst_plain;
  if (dst_blocked) {
    Bind(b.dst_blocked, plan.dst_md, scratch.dst.Get(plan.dst_md.get_size()));
    dst = &b.dst_blocked;
  }
  if (residual) {
    // The sum post-op adds what dst holds: put the residual there first.
    if (dst_blocked) {
      Bind(b.residual, plan.dst_plain, const_cast<float*>(residual));
      plan.dst_in.execute(s, b.residual, b.dst_blocked);
    } else if (residual != y) {
      std::memcpy(y, residual, plan.dst_plain.get_size());
    }
  }
  memory* wei;
  if (plan.has_packed) {
    wei = const_cast<memory*>(&plan.packed_weights);
  } else {
    Bind(b.wei_plain, plan.wei_plain, const_cast<void*>(w));
    wei = &b.wei_plain;
    if (plan.wei_md != plan.wei_plain) {
      Bind(b.wei_packed, plan.wei_md, scratch.weights.Get(plan.wei_md.get_size()));
      plan.wei_in.execute(s, b.wei_plain, b.wei_packed);
      wei = &b.wei_packed;
    }
  }
  Bind(b.scratch, plan.scratch_md, scratch.pad.Get(plan.scratch_md.get_size()));
  b.args[DNNL_ARG_SRC] = *src;
  b.args[DNNL_ARG_WEIGHTS] = *wei;
  b.args[DNNL_ARG_DST] = *dst;
  b.args[DNNL_ARG_SCRATCHPAD] = b.scratch;
  if (bias) {
    Bind(b.bias, plan.bias_md, const_cast<float*>(bias));
    b.args[DNNL_ARG_BIAS] = b.bias;
  }
  plan.prim.execute(s, b.args);
  if (dst_blocked) plan.dst_out.execute(s, b.dst_blocked, b.dst_plain);
  s.wait();
}

Status Run(const ExecOp& op, const ConvPlan& plan, const float* x, const void* w, const float* bias,
           const float* residual, float* y) {
  const ScopedIntraOpThreads threads(plan.threads);
  try {
    if (plan.winograd_bf16) {
      RunWinogradBf16(*plan.winograd_bf16, x, bias, residual, y);
    } else if (!plan.bound_busy.test_and_set(std::memory_order_acquire)) {
      if (!plan.bound) plan.bound = std::make_unique<BoundArgs>();
      struct Release {
        const ConvPlan& p;
        ~Release() { p.bound_busy.clear(std::memory_order_release); }
      } release{plan};
      Execute(plan, *plan.bound, x, w, bias, residual, y);
    } else {
      BoundArgs fresh;
      Execute(plan, fresh, x, w, bias, residual, y);
    }
  } catch (const dnnl::error& e) {
    return Status(StatusCode::kEpFail,
                  "oneDNN failed to run the convolution of node '" + op.name + "': " + e.what());
  }
  return Status::Ok();
}

memory::dims Dims(const std::vector<int64_t>& v) {
  return memory::dims(v.begin(), v.end());
}

struct PlainDescs {
  memory::desc src, dst, wei, bias;
};

// The primitive descriptor of g (layouts left to oneDNN, post-ops from the fused steps), and
// the plain layouts of its tensors as the graph holds them.
dnnl::convolution_forward::primitive_desc DescribeConv(
    const ConvGeometry& g, bool has_bias, bool has_residual, const FusedActivation& act,
    PlainDescs* plain, dnnl::algorithm algorithm = dnnl::algorithm::convolution_direct) {
  const ConvTensorDims d = DimsOf(g);
  plain->src = memory::desc(d.src, dt::f32, d.src_tag);
  plain->dst = memory::desc(d.dst, dt::f32, d.dst_tag);
  plain->wei = memory::desc(d.wei, dt::f32, d.wei_tag);
  plain->bias = memory::desc({g.out_channels}, dt::f32, tag::x);
  std::vector<int64_t> dil(g.dilations);
  for (auto& d : dil) d -= 1;  // oneDNN counts the gaps between taps
  const dt compute = g.bf16 ? dt::bf16 : dt::f32;
  const memory::desc any_src(d.src, compute, tag::any), any_dst(d.dst, dt::f32, tag::any),
      any_wei(d.wei, compute, tag::any);
  dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, algorithm, any_src,
                                       any_wei, has_bias ? plain->bias : memory::desc(), any_dst,
                                       Dims(g.strides), Dims(dil), Dims(g.pads_begin),
                                       Dims(g.pads_end));
  dnnl::post_ops ops;
  if (has_residual) ops.append_sum(1.f);
  AppendActivation(act, &ops);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return dnnl::convolution_forward::primitive_desc(desc, attr, OneDnnEngine());
}

// A memory descriptor from the bytes PackConvWeights stored (oneDNN 2.x's plain struct).
memory::desc DescFromBytes(const std::string& bytes) {
  dnnl_memory_desc_t raw;
  if (bytes.size() != sizeof raw)
    throw dnnl::error(dnnl_invalid_arguments, "the packed weights' layout description is damaged");
  std::memcpy(&raw, bytes.data(), sizeof raw);
  // A damaged description must not reach oneDNN: check what it would index with.
  bool sane = raw.ndims >= 1 && raw.ndims <= DNNL_MAX_NDIMS && raw.format_kind == dnnl_blocked &&
              (raw.data_type == dnnl_f32 || raw.data_type == dnnl_bf16) &&
              raw.format_desc.blocking.inner_nblks >= 0 &&
              raw.format_desc.blocking.inner_nblks <= DNNL_MAX_NDIMS;
  for (int d = 0; sane && d < raw.ndims; ++d)
    sane = raw.dims[d] > 0 && raw.padded_dims[d] >= raw.dims[d] && raw.padded_dims[d] < (1 << 24) &&
           raw.padded_offsets[d] == 0 && raw.format_desc.blocking.strides[d] >= 0;
  // The inner blocks: oneDNN indexes the dims with inner_idxs and divides by inner_blks; every
  // padded dim must hold whole blocks. No offset and no extra flags (compensation buffers) are
  // written by the compiler, so none is accepted.
  dnnl_dims_t block = {};
  for (int d = 0; d < DNNL_MAX_NDIMS; ++d) block[d] = 1;
  for (int i = 0; sane && i < raw.format_desc.blocking.inner_nblks; ++i) {
    const auto at = raw.format_desc.blocking.inner_idxs[i];
    const auto size = raw.format_desc.blocking.inner_blks[i];
    sane = at >= 0 && at < raw.ndims && size >= 1 && size <= (1 << 12);
    if (sane) block[at] *= size;
  }
  for (int d = 0; sane && d < raw.ndims; ++d) sane = raw.padded_dims[d] % block[d] == 0;
  sane = sane && raw.offset0 == 0 && raw.extra.flags == 0;
  if (!sane)
    throw dnnl::error(dnnl_invalid_arguments, "the packed weights' layout description is damaged");
  return memory::desc(raw);
}

// Constant weights reordered into a primitive's layout, shared by every plan of the process
// that reorders the same bytes into the same layout: sessions sharing a context binary map its
// weights once (the binary cache), so they find each other here and keep one reordered copy.
std::shared_ptr<void> SharedReorderedWeights(const memory::desc& from_md, void* from,
                                             const memory::desc& to_md) {
  struct Key {
    const void* data;
    std::string from, to;  // the two descriptors' bytes
    bool operator<(const Key& o) const {
      return std::tie(data, from, to) < std::tie(o.data, o.from, o.to);
    }
  };
  static std::mutex mu;
  static auto* cache = new std::map<Key, std::weak_ptr<void>>;  // never destroyed: see below
  const Key key{from,
                std::string(reinterpret_cast<const char*>(&from_md.data), sizeof from_md.data),
                std::string(reinterpret_cast<const char*>(&to_md.data), sizeof to_md.data)};
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache->find(key); it != cache->end()) {
    if (auto alive = it->second.lock()) return alive;
    cache->erase(it);
  }
  // Plans may be released by static destructors at exit, so the map outlives them.
  std::shared_ptr<void> bytes(std::aligned_alloc(64, (to_md.get_size() + 63) / 64 * 64), std::free);
  if (!bytes) throw std::bad_alloc();
  const dnnl::engine& eng = OneDnnEngine();
  memory src(from_md, eng, from), dst(to_md, eng, bytes.get());
  dnnl::stream& s = OneDnnStream();
  dnnl::reorder(src, dst).execute(s, src, dst);
  s.wait();
  (*cache)[key] = bytes;
  return bytes;
}

// Whether Winograd is expected to beat the direct kernel for g at this many threads. Measured
// with oneDNN 2.6 on a 2-core AVX-512 machine (scripts/conv_algorithms): at one thread the
// candidate layers of the bench models ran 1.1x-2.1x faster (one of 2M multiply-adds 0.98x-1.3x
// across runs); at two threads layers of 4M multiply-adds per thread or fewer mostly ran slower
// (0.4x-0.9x), since Winograd splits small images into few tiles to share, and layers from 16M
// per thread 1.2x-2x faster.
bool WinogradPays(const ConvGeometry& g, int threads) {
  if (!WinogradCandidate(g)) return false;
  if (threads <= 1 || g.algorithm == ConvAlgorithm::kWinograd) return true;
  return ConvMultiplyAdds(g) / threads >= 8e6;
}

// The primitive for g: Winograd where it pays and this oneDNN has it for the CPU (its f32
// Winograd kernels need AVX-512), the direct kernel otherwise.
dnnl::convolution_forward::primitive_desc DescribeFastestConv(const ConvGeometry& g, bool has_bias,
                                                              bool has_residual,
                                                              const FusedActivation& act,
                                                              bool weights_packed,
                                                              PlainDescs* plain) {
  // Packed weights are in the direct kernel's layout, chosen by the compiler.
  if (!weights_packed && WinogradPays(g, CurrentIntraOpThreads())) {
    try {
      return DescribeConv(g, has_bias, has_residual, act, plain,
                          dnnl::algorithm::convolution_winograd);
    } catch (const dnnl::error&) {
      // No Winograd kernel for this ISA or these post-ops: the direct one below.
    }
  }
  return DescribeConv(g, has_bias, has_residual, act, plain);
}

std::shared_ptr<ConvPlan> MakePlan(const ConvGeometry& g, bool has_bias, bool has_residual,
                                   const FusedActivation& act, const void* constant_w,
                                   const std::string& packed_desc,
                                   const std::vector<int64_t>& out_shape) {
  const dnnl::engine& eng = OneDnnEngine();
  auto plan = std::make_shared<ConvPlan>();
  plan->out_shape = out_shape;
  // The primitive is made for the threads this convolution is worth (the choice between
  // Winograd and the direct kernel below reads the same count).
  plan->threads = ThreadsForWork(ConvMultiplyAdds(g));
  const ScopedIntraOpThreads scope(plan->threads);
  // bf16 3x3 convolutions with plain constant weights: ortc's Winograd kernel where it pays.
  const int threads = CurrentIntraOpThreads();
  if (constant_w && packed_desc.empty() && WinogradBf16Pays(g, threads)) {
    try {
      plan->winograd_bf16 =
          MakeWinogradBf16Plan(g, static_cast<const float*>(constant_w), act, threads);
      plan->implementation = kWinogradBf16Implementation;
      return plan;
    } catch (const dnnl::error&) {
      // No bf16 matmul in this oneDNN for these sizes: the direct kernel below.
    }
  }
  PlainDescs plain;
  auto pd = DescribeFastestConv(g, has_bias, has_residual, act, !packed_desc.empty(), &plain);
  plan->src_plain = plain.src;
  plan->dst_plain = plain.dst;
  plan->wei_plain = plain.wei;
  plan->bias_md = plain.bias;
  plan->prim = dnnl::convolution_forward(pd);
  plan->implementation = pd.impl_info_str();
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
    // Constant weights: in the layout they are stored in (plain, or packed by the compiler), or
    // reordered once into the one this primitive reads. The constants outlive the plan (the
    // graph holds them), so a matching layout is read in place.
    void* data = const_cast<void*>(constant_w);
    const memory::desc stored = packed_desc.empty() ? plan->wei_plain : DescFromBytes(packed_desc);
    // The stored layout must describe these weights' dims (the byte size was checked against
    // it; its type may be bf16 where the plain weights are f32).
    if (stored.dims() != plan->wei_plain.dims())
      throw dnnl::error(dnnl_invalid_arguments,
                        "the packed weights' layout describes other weights than this Conv's");
    if (stored == plan->wei_md) {
      plan->packed_weights = memory(plan->wei_md, eng, data);
    } else {
      plan->reordered = SharedReorderedWeights(stored, data, plan->wei_md);
      plan->packed_weights = memory(plan->wei_md, eng, plan->reordered.get());
    }
    plan->has_packed = true;
  }
  return plan;
}

}  // namespace

ConvAlgorithm ParseConvAlgorithm(const std::string& name) {
  if (name == "direct") return ConvAlgorithm::kDirect;
  if (name == "winograd") return ConvAlgorithm::kWinograd;
  return ConvAlgorithm::kAuto;
}

double ConvMultiplyAdds(const ConvGeometry& g) {
  double macs = static_cast<double>(g.batch) * g.out_channels *
                static_cast<double>(g.in_channels / std::max<int64_t>(g.group, 1));
  for (int64_t k : g.kernel) macs *= static_cast<double>(k);
  for (int64_t o : g.out) macs *= static_cast<double>(o);
  return macs;
}

bool WinogradCandidate(const ConvGeometry& g) {
  auto all_one = [](const std::vector<int64_t>& v) {
    return std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 1; });
  };
  // Three input channels (a network's first layer) ran 0.4x: too little work per tile.
  return g.algorithm != ConvAlgorithm::kDirect && !g.bf16 && g.in.size() == 2 &&
         g.kernel == std::vector<int64_t>{3, 3} && all_one(g.strides) && all_one(g.dilations) &&
         g.group == 1 && g.in_channels >= 16 && g.out_channels >= 16;
}

const void* FindConvPlan(OneDnnConvCache* cache, const std::vector<int64_t>& key,
                         const std::vector<int64_t>** out_shape) {
  std::lock_guard<std::mutex> lock(cache->mu);
  // Most recent first: a model run at one size finds its plan at once.
  for (auto it = cache->plans.rbegin(); it != cache->plans.rend(); ++it) {
    if (it->first != key || !it->second) continue;
    const auto* plan = static_cast<const ConvPlan*>(it->second.get());
    *out_shape = &plan->out_shape;
    return plan;
  }
  return nullptr;
}

const std::string& ConvPlanImplementation(const void* plan) {
  return static_cast<const ConvPlan*>(plan)->implementation;
}

Status RunConvPlan(const ExecOp& op, const void* plan, const float* x, const void* w,
                   const float* bias, const float* residual, float* y) {
  return Run(op, *static_cast<const ConvPlan*>(plan), x, w, bias, residual, y);
}

Status OneDnnConv(const ExecOp& op, OneDnnConvCache* cache, const ConvGeometry& g, const float* x,
                  const void* w, const float* bias, const float* residual,
                  const FusedActivation& act, const std::vector<int64_t>& key,
                  const std::vector<int64_t>& out_shape, float* y, bool* handled) {
  *handled = false;
  if (!cache || g.in.empty() || g.in.size() > 3 || (g.channels_last && g.in.size() != 2))
    return Status::Ok();
  const auto plan = std::static_pointer_cast<const ConvPlan>(FindOrMakePlan(cache, key, [&] {
    return MakePlan(g, bias != nullptr, residual != nullptr, act,
                    cache->weights_constant ? w : nullptr, cache->packed_desc, out_shape);
  }));
  if (!plan) return Status::Ok();
  ORTC_RETURN_IF_ERROR(Run(op, *plan, x, w, bias, residual, y));
  *handled = true;
  return Status::Ok();
}

Result<PackedConvWeights> PackConvWeights(const ConvGeometry& g, bool has_bias, bool has_residual,
                                          const FusedActivation& act, const float* weights) {
  PackedConvWeights out;
  if (WinogradCandidate(g) || WinogradBf16Candidate(g)) {
    // Left plain: the runtime chooses between Winograd and the direct kernel by its thread
    // count, and transforms them for Winograd from the plain layout.
    out.impl = "winograd or direct, chosen at run time";
    return out;
  }
  try {
    PlainDescs plain;
    auto pd = DescribeConv(g, has_bias, has_residual, act, &plain);
    const memory::desc packed = pd.weights_desc();
    out.impl = pd.impl_info_str();
    if (packed == plain.wei) return out;
    const dnnl::engine& eng = OneDnnEngine();
    out.bytes.resize(packed.get_size());
    memory from(plain.wei, eng, const_cast<float*>(weights)), to(packed, eng, out.bytes.data());
    dnnl::stream& s = OneDnnStream();
    dnnl::reorder(from, to).execute(s, from, to);
    s.wait();
    out.desc.assign(reinterpret_cast<const char*>(&packed.data), sizeof packed.data);
    out.changed = true;
  } catch (const dnnl::error& e) {
    return NotImplemented(std::string("oneDNN has no convolution for these weights: ") + e.what());
  }
  return out;
}

namespace {

const std::pair<const char*, dnnl::cpu_isa> kIsas[] = {
    {"avx2", dnnl::cpu_isa::avx2},
    {"avx512_core", dnnl::cpu_isa::avx512_core},
    {"avx512_core_bf16", dnnl::cpu_isa::avx512_core_bf16},
    {"avx512_core_amx", dnnl::cpu_isa::avx512_core_amx}};

}  // namespace

Status LimitOneDnnIsa(const std::string& isa) {
  const auto* it = std::find_if(std::begin(kIsas), std::end(kIsas),
                                [&](const auto& k) { return isa == k.first; });
  if (it == std::end(kIsas))
    return InvalidArgument("unknown CPU ISA '" + isa +
                           "' (known: avx2, avx512_core, avx512_core_bf16, avx512_core_amx)");
  // Fails once oneDNN has generated code; then the limit already in force must be this one.
  (void)dnnl::set_max_cpu_isa(it->second);
  const std::string effective = OneDnnEffectiveIsa();
  if (effective != isa)
    return InvalidArgument("cannot pack weights for " + isa + ": oneDNN generates code for " +
                           (effective.empty() ? std::string("an older ISA") : effective) +
                           " in this process (this CPU lacks " + isa +
                           ", or another ISA was chosen first); compile on a machine with " + isa +
                           ", or with --target-isa native or portable");
  return Status::Ok();
}

std::string OneDnnEffectiveIsa() {
  const dnnl::cpu_isa effective = dnnl::get_effective_cpu_isa();
  std::string best;
  // The names above are ordered by capability; the effective ISA is the largest one included.
  for (const auto& [name, isa] : kIsas)
    if ((static_cast<unsigned>(effective) & static_cast<unsigned>(isa)) ==
        static_cast<unsigned>(isa))
      best = name;
  return best;
}

size_t PackedWeightsBytes(const std::string& desc) {
  try {
    return DescFromBytes(desc).get_size();
  } catch (const dnnl::error&) {
    return 0;
  }
}

std::string OneDnnVersion() {
  const dnnl_version_t* v = dnnl_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

}  // namespace ortc::exec
