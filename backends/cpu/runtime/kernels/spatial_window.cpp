// A convolution or pooling window's geometry, checked so that no later index arithmetic can
// overflow.
#include "cpu/runtime/kernels/spatial_window.h"

#include <algorithm>

namespace ortc::exec {

Result<Window> MakeWindow(const ExecOp& op, const std::vector<int64_t>& in_spatial,
                          std::vector<int64_t> kernel, bool ceil_mode) {
  const size_t n = in_spatial.size();
  Window w;
  w.in = in_spatial;
  w.kernel = std::move(kernel);
  w.strides = op.Ints("strides", std::vector<int64_t>(n, 1));
  w.dilations = op.Ints("dilations", std::vector<int64_t>(n, 1));
  auto pads = op.Ints("pads", std::vector<int64_t>(2 * n, 0));
  if (w.kernel.size() != n || w.strides.size() != n || w.dilations.size() != n ||
      pads.size() != 2 * n) {
    return InvalidArgument(
        "kernel_shape, strides, dilations or pads do not match the spatial rank");
  }
  // Bounded so the geometry below cannot overflow 64 bits (a corrupt program can hold anything).
  constexpr int64_t kMaxWindow = int64_t{1} << 31;
  for (size_t i = 0; i < n; ++i)
    if (w.kernel[i] < 1 || w.strides[i] < 1 || w.dilations[i] < 1)
      return InvalidArgument("kernel_shape, strides and dilations must be at least 1");
  for (size_t i = 0; i < n; ++i)
    if (w.kernel[i] > kMaxWindow || w.strides[i] > kMaxWindow || w.dilations[i] > kMaxWindow)
      return InvalidArgument("kernel_shape, strides and dilations must be below 2^31");
  for (int64_t p : pads)
    if (p < 0 || p > kMaxWindow) return InvalidArgument("pads must be in [0, 2^31]");
  w.pads_begin.assign(pads.begin(), pads.begin() + n);
  w.pads_end.assign(pads.begin() + n, pads.end());
  const std::string auto_pad = op.String("auto_pad", "NOTSET");
  w.out.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t eff = w.dilations[i] * (w.kernel[i] - 1) + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      w.out[i] = (w.in[i] + w.strides[i] - 1) / w.strides[i];
      const int64_t total = std::max<int64_t>(0, (w.out[i] - 1) * w.strides[i] + eff - w.in[i]);
      w.pads_begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.pads_end[i] = total - w.pads_begin[i];
    } else {
      if (auto_pad == "VALID") w.pads_begin[i] = w.pads_end[i] = 0;
      const int64_t span = w.in[i] + w.pads_begin[i] + w.pads_end[i] - eff;
      if (span < 0) return InvalidArgument("the kernel is larger than the padded input");
      w.out[i] = (ceil_mode ? (span + w.strides[i] - 1) / w.strides[i] : span / w.strides[i]) + 1;
      if (ceil_mode && (w.out[i] - 1) * w.strides[i] >= w.in[i] + w.pads_begin[i]) --w.out[i];
    }
  }
  return w;
}

}  // namespace ortc::exec
