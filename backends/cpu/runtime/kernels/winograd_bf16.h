// bf16 Winograd F(2x2,3x3) for channels-last float convolutions of bf16 bundles
// (--precision bf16). oneDNN 2.6 has Winograd kernels for f32 only, so its bf16 3x3 convolutions
// do all 9 multiply-adds per output at the dot-product peak; here each 2x2 output tile takes 16
// products instead of 36, as 16 bf16 GEMMs (oneDNN matmul, fp32 accumulation) between
// transforms computed in fp32 (AVX-512). Tiles are processed in blocks small enough for the
// transformed input and the GEMM results to stay in the core's L2 cache, one block per thread at
// a time.
//
// Accuracy: the transformed input and weights are rounded to bf16 (instead of the input and the
// weights themselves, as bf16 direct convolution does); the output transform then adds up to 9
// products' partial sums with signs, so the error relative to the output's scale is about 1.5x
// that of the direct bf16 kernel (winograd_bf16_test.cpp measures both).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "cpu/runtime/kernels/fused_activation.h"
#include "cpu/runtime/kernels/onednn_conv.h"

namespace ortc::exec {

struct WinogradBf16Plan;

// Whether g has the shape this kernel takes: bf16, channels-last 2-D input and output, 3x3,
// stride 1, no dilation, one group, pads of at most 2, channel counts that are multiples of 16,
// on a CPU with AVX512-BF16, and the compiler did not rule Winograd out.
bool WinogradBf16Candidate(const ConvGeometry& g);

// Whether the candidate g is expected to beat oneDNN's direct bf16 kernel at this many threads.
bool WinogradBf16Pays(const ConvGeometry& g, int threads);

// The plan for g: the weights (OIHW fp32, constant) transformed and packed for the GEMMs, the
// GEMM primitives for the block sizes used at `threads` threads, and the steps applied to the
// result. Throws dnnl::error when oneDNN has no bf16 matmul here.
std::shared_ptr<const WinogradBf16Plan> MakeWinogradBf16Plan(const ConvGeometry& g,
                                                             const float* weights,
                                                             const FusedActivation& act,
                                                             int threads);

// y = act(conv(x, w) + bias + residual) for NHWC x, y and residual (bias and residual may be
// nullptr; residual may be y itself). Throws what oneDNN or an allocation throws.
void RunWinogradBf16(const WinogradBf16Plan& plan, const float* x, const float* bias,
                     const float* residual, float* y);

// The kernel's name, as plans report their implementation.
inline const std::string kWinogradBf16Implementation = "ortc_winograd_bf16_2x3:avx512_core_bf16";

}  // namespace ortc::exec
