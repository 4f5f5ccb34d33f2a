// The spatial geometry of a convolution or pooling window, from an op's kernel_shape, strides,
// dilations, pads and auto_pad attributes.
#pragma once

#include <cstdint>
#include <vector>

#include "cpu_kernel/kernel_context.h"

namespace ortc::exec {

// Spatial geometry shared by convolutions and pooling: per spatial dimension.
struct Window {
  std::vector<int64_t> in, kernel, strides, dilations, pads_begin, pads_end, out;
};

// The window over input spatial dims in_spatial with the given kernel; ceil_mode rounds the
// output size up (pooling). Fails on attributes that do not match the rank or are out of range.
Result<Window> MakeWindow(const ExecOp& op, const std::vector<int64_t>& in_spatial,
                          std::vector<int64_t> kernel, bool ceil_mode = false);

}  // namespace ortc::exec
