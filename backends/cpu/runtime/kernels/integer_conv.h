// The integer convolution behind ConvInteger and QLinearConv: both convolve zero-point-shifted
// integer tensors and differ only in what they do with the accumulators.
#pragma once

#include <cstdint>
#include <vector>

#include "cpu_kernel/kernel_context.h"

namespace ortc::exec {

struct IntegerConvOutput {
  std::vector<int64_t> shape;  // [N, M, output spatial dims...]
  std::vector<int64_t> acc;    // one 64-bit accumulator per output element
};

// (x - x_zero) convolved with (w - w_zero) under the op's group, kernel_shape, strides, pads,
// auto_pad and dilations attributes. x_zero is a scalar; w_zero a scalar or one per output
// channel; either may be null (zero). Errors name c's op type.
Result<IntegerConvOutput> IntegerConv(KernelContext& c, const Tensor& x, const Tensor* x_zero,
                                      const Tensor& w, const Tensor* w_zero);

}  // namespace ortc::exec
