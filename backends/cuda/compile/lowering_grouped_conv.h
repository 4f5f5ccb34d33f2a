// Depthwise and narrow grouped convolutions as generated GroupedConv kernels
// (codegen/grouped_conv_kernels.cpp) instead of cuDNN calls: which convolutions, and the
// kernel request for one.
#pragma once

#include <cstdint>
#include <string>

#include "cuda/compile/codegen/kernel_codegen.h"
#include "cuda/compile/options.h"
#include "cuda/compile/plan.h"

namespace ortc::backends::cuda {

// Widest group (input channels per group) the static rule generates: cuDNN runs depthwise
// (1 channel per group) and other narrow groups in its generic engines (ncu on PP-OCR and
// mobilenet_v2), while wide groups (ResNeXt's 4-32 channels x 3x3) have real grouped kernels.
constexpr int64_t kGeneratedConvMaxGroupChannels = 8;

// Whether GroupedConv can compute `c` at all (forward, 1-D or 2-D, Relu/Clip or no activation).
bool GroupedConvApplies(const PlanConv& c);
// Its key in tuning caches: what it computes (dims, attributes, epilogue with or without a
// bias, the element type it stores, c.layout).
std::string GroupedConvKey(const PlanConv& c, bool bias, int32_t dtype);
// Generated kernel or cuDNN call for `c` (GroupedConvApplies) and why: options.grouped_conv
// forces one ("option"), else a fitting tuning cache that measured the key ("measured"), else
// the static rule above ("rule").
PlanChoice ChooseGroupedConv(const PlanConv& c, bool bias, const std::string& step, int32_t dtype,
                             const CudaOptions& options);

// The kernel request: x, the CRSK filter, bias [K] and residual z (dtype 0 when absent); y.
codegen::OpDesc GroupedConvDesc(const PlanConv& c, int32_t x_dtype, int32_t w_dtype,
                                int32_t bias_dtype, int32_t z_dtype, int32_t y_dtype,
                                codegen::Layout layout);

}  // namespace ortc::backends::cuda
