// Float convolutions through oneDNN: the primitive oneDNN picks for this machine's ISA (direct
// JIT kernels over blocked layouts), with the bias, a residual Add and the activation of a
// FusedConv applied as post-ops. Primitives and reordered weights are built once per input
// shape and cached on the op.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "cpu/runtime/kernels/fused_activation.h"
#include "cpu_kernel/kernel_context.h"

namespace ortc::exec {

// How a float convolution may be computed, as the compiler recorded it (cpu:conv_algorithm):
// kAuto lets the runtime take Winograd where it pays, kDirect never, kWinograd wherever oneDNN
// has a Winograd kernel for it (whatever the thread count; for measuring).
enum class ConvAlgorithm { kAuto, kDirect, kWinograd };
// The attribute's value ("auto", "direct", "winograd"); anything else reads as kAuto.
ConvAlgorithm ParseConvAlgorithm(const std::string& name);

// The geometry Conv resolved (auto_pad applied), spatial rank 1 to 3.
struct ConvGeometry {
  int64_t batch = 0, in_channels = 0, out_channels = 0, group = 1;
  std::vector<int64_t> in, kernel, strides, dilations, pads_begin, pads_end, out;
  bool channels_last = false;  // x, residual and y are NHWC (2-D only); weights stay OIHW
  bool input_nchw = false;     // with channels_last: x is NCHW all the same
  bool bf16 = false;           // x and weights rounded to bf16; fp32 accumulation and output
  ConvAlgorithm algorithm = ConvAlgorithm::kAuto;
};

// The multiply-adds one run of g computes (what decides how many threads it is worth).
double ConvMultiplyAdds(const ConvGeometry& g);

// Whether g has the shape oneDNN's Winograd kernels take and that pays off (float 3x3,
// stride 1, no dilation, one group, 16 or more input and output channels) and the compiler
// allowed it. Under kAuto the thread count decides the rest at run time (WinogradPays in
// onednn_conv.cpp).
bool WinogradCandidate(const ConvGeometry& g);

// Per-op cache of oneDNN plans, by a key of the run's shapes; created when kernels are bound
// (the op is shared by every run, so it is guarded by a mutex).
struct OneDnnPlanCache : KernelCache {
  std::mutex mu;
  std::vector<std::pair<std::vector<int64_t>, std::shared_ptr<const void>>> plans;
};

// The plan kept under key, made by make() the first time. make() answers nullptr (or throws
// dnnl::error) when oneDNN cannot take the case; that answer is kept too, so the caller's own
// loops run without asking oneDNN again. A model run at many sizes keeps its 8 most recent plans
// (each may hold reordered weights); runs still using an evicted plan keep it alive.
std::shared_ptr<const void> FindOrMakePlan(
    OneDnnPlanCache* cache, const std::vector<int64_t>& key,
    const std::function<std::shared_ptr<const void>()>& make);

struct OneDnnConvCache : OneDnnPlanCache {
  OneDnnConvCache(bool weights_constant, std::string packed_desc)
      : weights_constant(weights_constant), packed_desc(std::move(packed_desc)) {}
  const bool weights_constant;
  // Weights the compiler packed (--target-isa): oneDNN's description of their layout; empty
  // for plain OIHW weights.
  const std::string packed_desc;
};

// NHWC float MaxPool / AveragePool through oneDNN's pooling primitive. in / out: H, W and OH,
// OW; the window's kernel, strides and pads (dilations must be 1). Sets *handled to false when
// oneDNN's pooling cannot express the case (then the caller's loops run).
struct PoolGeometry {
  int64_t batch = 0, channels = 0;
  std::vector<int64_t> in, out, kernel, strides, pads_begin, pads_end;
  bool max = true, count_include_pad = false;
};
Status OneDnnPoolNhwc(const ExecOp& op, OneDnnPlanCache* cache, const PoolGeometry& g,
                      const float* x, float* y, bool* handled);

// Runs the convolution y = act(conv(x, w) + b + residual) with oneDNN into y (NCHW float, or
// NHWC with channels_last; its shape already set, out_shape). residual may be nullptr. Sets
// *handled to false when oneDNN cannot take this case (the caller then runs its own loops).
// The plan made is kept under key, which must identify every shape g was made from (Conv uses
// the shapes of x, w and the bias).
Status OneDnnConv(const ExecOp& op, OneDnnConvCache* cache, const ConvGeometry& g, const float* x,
                  const void* w, const float* bias, const float* residual,
                  const FusedActivation& act, const std::vector<int64_t>& key,
                  const std::vector<int64_t>& out_shape, float* y, bool* handled);

// The plan an earlier run made under this key (and its output shape), or nullptr: the fast
// path of repeated runs, which skips reading the op's attributes again.
const void* FindConvPlan(OneDnnConvCache* cache, const std::vector<int64_t>& key,
                         const std::vector<int64_t>** out_shape);
// oneDNN's name for the kernel a plan runs ("brgconv:avx512_core", "jit_wino_4x3:avx512_core").
const std::string& ConvPlanImplementation(const void* plan);
Status RunConvPlan(const ExecOp& op, const void* plan, const float* x, const void* w,
                   const float* bias, const float* residual, float* y);

// The geometry of a Conv-like op (NCHW x and OIHW w shapes, the op's window attributes).
Result<ConvGeometry> ResolveConvGeometry(const ExecOp& op, const std::vector<int64_t>& x_shape,
                                         const std::vector<int64_t>& w_shape);

// Quantized convolution (QLinearConv) through oneDNN's int8 primitives (VNNI / AMX where the
// CPU has them): y = saturate(round((conv(x - x_zero, w) + bias) * scale[m]) + y_zero), with
// scale[m] = x_scale * w_scale[m] / y_scale, one value or one per output channel. x and y are
// NCHW uint8 or int8, w int8 with zero point 0, bias int32 or null. Sets *handled to false
// when oneDNN cannot take the case.
struct QuantizedConvParams {
  int32_t x_zero = 0, y_zero = 0;
  std::vector<float> scales;  // 1 or out_channels values
  bool x_signed = false, y_signed = false;
};
Status OneDnnQuantizedConv(const ExecOp& op, OneDnnConvCache* cache, const ConvGeometry& g,
                           const QuantizedConvParams& q, const void* x, const int8_t* w,
                           const int32_t* bias, void* y, bool* handled);

// Compile-time packing (ortc compile --target-isa): the weights in the layout the primitive for
// g reads on the ISA oneDNN is limited to, and oneDNN's description of that layout.
struct PackedConvWeights {
  std::string bytes;     // the weights in the primitive's layout (f32, or bf16 for g.bf16)
  std::string desc;      // oneDNN's memory descriptor of that layout
  std::string impl;      // the implementation oneDNN chose, e.g. "brgconv:avx512_core"
  bool changed = false;  // false: the primitive reads plain OIHW weights (nothing to pack)
};
Result<PackedConvWeights> PackConvWeights(const ConvGeometry& g, bool has_bias, bool has_residual,
                                          const FusedActivation& act, const float* weights);

// oneDNN's instruction-set limit for this process: "avx2", "avx512_core", "avx512_core_bf16"
// or "avx512_core_amx". Must come before oneDNN generates any code; fails when this CPU lacks
// the ISA (packing for it needs a machine that has it).
Status LimitOneDnnIsa(const std::string& isa);
// The ISA oneDNN generates code for in this process, in the names above ("" if older).
std::string OneDnnEffectiveIsa();
// Bytes the packed layout described by desc occupies; 0 when desc is not a valid description.
size_t PackedWeightsBytes(const std::string& desc);
// "major.minor.patch" of the oneDNN library in use.
std::string OneDnnVersion();

}  // namespace ortc::exec
