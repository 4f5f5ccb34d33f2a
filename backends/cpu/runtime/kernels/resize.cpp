// Resize (and the older Upsample): nearest, linear and cubic interpolation over any axes, with
// every coordinate transformation mode of the ONNX specification. Separable: each axis gets a
// list of (input index, weight) taps per output coordinate.
#include <algorithm>
#include <cmath>

#include "cpu/runtime/kernels/kernel_util.h"
#include "cpu/runtime/kernels/registry.h"

namespace ortc::exec {
namespace {

struct Tap {
  int64_t index;  // -1: outside the input (extrapolation value)
  double weight;
};

double Original(const std::string& mode, double out, double scale, int64_t in_len, int64_t out_len,
                double roi_start, double roi_end) {
  if (mode == "half_pixel") return (out + 0.5) / scale - 0.5;
  if (mode == "half_pixel_symmetric") {
    const double adjustment = static_cast<double>(out_len) / (scale * static_cast<double>(in_len));
    const double center = static_cast<double>(in_len) / 2;
    return center * (1 - adjustment) + (out + 0.5) / scale - 0.5;
  }
  if (mode == "pytorch_half_pixel") return out_len > 1 ? (out + 0.5) / scale - 0.5 : 0.0;
  if (mode == "align_corners") {
    // The spec's length_resized is scale * length (not rounded) when scales are given.
    const double resized = scale * static_cast<double>(in_len);
    return out_len == 1 || resized == 1.0 ? 0.0
                                          : out * static_cast<double>(in_len - 1) / (resized - 1);
  }
  if (mode == "tf_half_pixel_for_nn") return (out + 0.5) / scale;
  if (mode == "tf_crop_and_resize") {
    return out_len > 1 ? roi_start * (in_len - 1) + out * (roi_end - roi_start) * (in_len - 1) /
                                                        static_cast<double>(out_len - 1)
                       : 0.5 * (roi_start + roi_end) * (in_len - 1);
  }
  return out / scale;  // asymmetric
}

std::vector<double> CubicWeights(double t, double a) {
  auto w = [a](double x) {
    x = std::fabs(x);
    if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
    if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
    return 0.0;
  };
  return {w(t + 1), w(t), w(1 - t), w(2 - t)};
}

}  // namespace

// Every output takes exactly one input element whole (nearest mode, or axes left as they are):
// the resize is a gather, done by copying element bits instead of interpolating in double.
bool SingleTaps(const std::vector<std::vector<std::vector<Tap>>>& taps) {
  for (const auto& axis : taps)
    for (const auto& t : axis)
      if (t.size() != 1 || t[0].weight != 1.0 || t[0].index < 0) return false;
  return true;
}

template <typename Bits>
void Gather(const Tensor& x, const std::vector<std::vector<std::vector<Tap>>>& taps,
            const std::vector<int64_t>& xs, Tensor& y) {
  const size_t rank = taps.size();
  // Source offset of each output coordinate, per axis.
  std::vector<std::vector<int64_t>> offset(rank);
  for (size_t a = 0; a < rank; ++a)
    for (const auto& t : taps[a]) offset[a].push_back(t[0].index * xs[a]);
  const Bits* src = static_cast<const Bits*>(x.raw());
  Bits* dst = static_cast<Bits*>(y.mutable_raw());
  const auto& last = offset[rank - 1];
  const int64_t row = static_cast<int64_t>(last.size());
  const int64_t rows = y.elements() / row;
  std::vector<int64_t> at(rank, 0);  // output coordinate of the current row (last axis 0)
  for (int64_t r = 0; r < rows; ++r) {
    int64_t base = 0;
    for (size_t a = 0; a + 1 < rank; ++a) base += offset[a][at[a]];
    Bits* out = dst + r * row;
    for (int64_t k = 0; k < row; ++k) out[k] = src[base + last[k]];
    for (size_t a = rank - 1; a-- > 0;) {  // next row
      if (++at[a] < static_cast<int64_t>(offset[a].size())) break;
      at[a] = 0;
    }
  }
}

Status ResizeKernel(KernelContext& c) {
  const Tensor& x = c.in(0);
  const auto& op = c.op();
  const int64_t rank = x.rank();
  const bool upsample = op.op_type == "Upsample";
  const bool legacy = upsample || op.version < 11;
  std::string mode = op.String("mode", "nearest");
  std::string coord =
      legacy ? "asymmetric" : op.String("coordinate_transformation_mode", "half_pixel");
  std::string nearest = legacy ? "floor" : op.String("nearest_mode", "round_prefer_floor");
  const double cubic_a = op.Float("cubic_coeff_a", -0.75f);
  const bool exclude_outside = op.Int("exclude_outside", 0) != 0;
  const double extrapolation = op.Float("extrapolation_value", 0.f);

  std::vector<int64_t> axes = op.Ints("axes");
  if (axes.empty()) {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  for (auto& a : axes) {
    if (!NormaliseAxis(a, rank)) return c.Error("axis out of range");
  }
  std::vector<double> scales(rank, 1.0), roi_start(rank, 0.0), roi_end(rank, 1.0);
  std::vector<int64_t> out_shape = x.shape();
  const Tensor* scales_t = nullptr;
  const Tensor* sizes_t = nullptr;
  if (upsample && op.version < 9) {
    const auto s = op.Floats("scales");
    for (int64_t i = 0; i < rank && i < static_cast<int64_t>(s.size()); ++i) scales[i] = s[i];
  } else if (legacy) {
    scales_t = c.input(1);
  } else {
    scales_t = c.input(2);
    sizes_t = c.input(3);
    if (c.has_input(1) && c.in(1).elements() > 0) {
      const Tensor& roi = c.in(1);
      const int64_t n = roi.elements() / 2;
      // A start and an end per axis (or per axes entry): other counts indexed past axes.
      if (roi.elements() % 2 != 0 || (n != rank && n != static_cast<int64_t>(axes.size())))
        return c.Error("roi must have a start and an end per axis");
      for (int64_t k = 0; k < n; ++k) {
        const int64_t a = n == rank ? k : axes[k];
        roi_start[a] = ElementAsDouble(roi, k);
        roi_end[a] = ElementAsDouble(roi, k + n);
        if (!std::isfinite(roi_start[a]) || !std::isfinite(roi_end[a]))
          return c.Error("roi must be finite");
      }
    }
  }
  // Output lengths computed in double are converted only when finite and within 2^40: NaN, inf
  // and values past int64 convert undefined.
  bool bad_length = false;
  auto length = [&](double v) {
    if (!(v >= 0 && v <= static_cast<double>(kMaxTensorElements))) {
      bad_length = true;
      return int64_t{0};
    }
    return static_cast<int64_t>(v);
  };
  if (sizes_t && sizes_t->elements() > 0) {
    auto sizes = IntsOf(sizes_t);
    if (!sizes || sizes->size() != axes.size()) return c.Error("sizes does not match the axes");
    for (int64_t v : *sizes)
      if (v < 0) return c.Error("sizes must not be negative");
    const std::string policy = op.String("keep_aspect_ratio_policy", "stretch");
    double common = policy == "not_larger" ? INFINITY : 0.0;
    for (size_t k = 0; k < axes.size(); ++k) {
      const double s = static_cast<double>((*sizes)[k]) / static_cast<double>(x.shape()[axes[k]]);
      common = policy == "not_larger" ? std::min(common, s) : std::max(common, s);
    }
    for (size_t k = 0; k < axes.size(); ++k) {
      const int64_t a = axes[k];
      if (policy == "stretch") {
        out_shape[a] = (*sizes)[k];
        scales[a] = static_cast<double>(out_shape[a]) / static_cast<double>(x.shape()[a]);
      } else {
        scales[a] = common;
        out_shape[a] = length(std::round(common * static_cast<double>(x.shape()[a])));
      }
    }
  } else if (scales_t && scales_t->elements() > 0) {
    const int64_t n = scales_t->elements();
    if (n != static_cast<int64_t>(axes.size()) && n != rank)
      return c.Error("scales does not match the axes");
    for (int64_t k = 0; k < n; ++k) {
      const int64_t a = n == rank ? k : axes[k];
      scales[a] = ElementAsDouble(*scales_t, k);
    }
    for (int64_t a = 0; a < rank; ++a)
      out_shape[a] = length(std::floor(static_cast<double>(x.shape()[a]) * scales[a]));
  } else if (!(upsample && op.version < 9)) {
    return c.Error("neither scales nor sizes is given");
  } else {
    for (int64_t a = 0; a < rank; ++a)
      out_shape[a] = length(std::floor(static_cast<double>(x.shape()[a]) * scales[a]));
  }
  if (bad_length) return c.Error("scales or sizes give an output length that is not in [0, 2^40]");
  for (int64_t a = 0; a < rank; ++a) {
    // An empty axis has no taps: its scale (0 / 0 from sizes) is never used.
    if (x.shape()[a] > 0 && (!std::isfinite(scales[a]) || scales[a] <= 0))
      return c.Error("scales must be finite and positive");
    if (x.shape()[a] == 0 && out_shape[a] > 0)
      return c.Error("cannot resize an axis of length 0 to a longer one");
  }
  // The taps below take memory per output coordinate: the output's size is checked first.
  if (!ShapeWithinLimit(out_shape)) return c.Error("the output would have more than 2^40 elements");
  c.CheckSize(0, x.dtype(), out_shape);
  if (mode == "bilinear" || mode == "trilinear") mode = "linear";

  // Taps per axis per output coordinate.
  std::vector<std::vector<std::vector<Tap>>> taps(rank);
  for (int64_t a = 0; a < rank; ++a) {
    const int64_t in_len = x.shape()[a], out_len = out_shape[a];
    taps[a].resize(out_len);
    for (int64_t o = 0; o < out_len; ++o) {
      auto& t = taps[a][o];
      if (scales[a] == 1.0 && coord != "tf_crop_and_resize" && out_len == in_len) {
        t.push_back({o, 1.0});
        continue;
      }
      const double orig = Original(coord, static_cast<double>(o), scales[a], in_len, out_len,
                                   roi_start[a], roi_end[a]);
      if (!std::isfinite(orig)) return c.Error("the resize maps an output coordinate to no input");
      if (coord == "tf_crop_and_resize" && (orig < 0 || orig > in_len - 1)) {
        t.push_back({-1, 1.0});
        continue;
      }
      if (mode == "nearest") {
        double idx;
        if (nearest == "floor")
          idx = std::floor(orig);
        else if (nearest == "ceil")
          idx = std::ceil(orig);
        else if (nearest == "round_prefer_ceil")
          idx = std::floor(orig + 0.5);
        else
          idx = (orig - std::floor(orig) == 0.5) ? std::floor(orig) : std::round(orig);
        // Clamped in double, then converted: orig may lie far outside the input.
        t.push_back(
            {static_cast<int64_t>(std::clamp(idx, 0.0, static_cast<double>(in_len - 1))), 1.0});
      } else if (mode == "linear") {
        const double clamped = std::clamp(orig, 0.0, static_cast<double>(in_len - 1));
        const auto i0 = static_cast<int64_t>(std::floor(clamped));
        const int64_t i1 = std::min(i0 + 1, in_len - 1);
        const double f = clamped - static_cast<double>(i0);
        t.push_back({i0, 1 - f});
        if (f > 0) t.push_back({i1, f});
      } else if (mode == "cubic") {
        // Beyond 4 taps outside, every tap clamps to the edge: clamping orig there first keeps
        // the conversion defined and changes no result.
        const double near = std::clamp(orig, -4.0, static_cast<double>(in_len) + 3.0);
        const auto base = static_cast<int64_t>(std::floor(near));
        const auto w = CubicWeights(near - static_cast<double>(base), cubic_a);
        double total = 0;
        for (int k = 0; k < 4; ++k) {
          const int64_t idx = base - 1 + k;
          const bool outside = idx < 0 || idx >= in_len;
          if (outside && exclude_outside) continue;
          t.push_back({std::clamp<int64_t>(idx, 0, in_len - 1), w[k]});
          total += w[k];
        }
        if (exclude_outside && total != 0) {
          for (auto& tap : t) tap.weight /= total;
        }
        // Every tap outside and excluded: the edge, as without exclude_outside (an empty list
        // was read at its first entry below).
        if (t.empty()) t.push_back({std::clamp<int64_t>(base, 0, in_len - 1), 1.0});
      } else {
        return c.Error("resize mode '" + mode + "' is not supported");
      }
    }
  }
  const auto xs = Strides(x.shape());
  if (x.dtype() != DataType::kString && rank > 0 && SingleTaps(taps)) {
    Tensor& y = c.OutputUninit(0, x.dtype(), out_shape);
    if (y.elements() == 0) return Status::Ok();
    switch (ElementSize(x.dtype())) {
      case 1:
        Gather<uint8_t>(x, taps, xs, y);
        return Status::Ok();
      case 2:
        Gather<uint16_t>(x, taps, xs, y);
        return Status::Ok();
      case 4:
        Gather<uint32_t>(x, taps, xs, y);
        return Status::Ok();
      case 8:
        Gather<uint64_t>(x, taps, xs, y);
        return Status::Ok();
      default:
        break;  // the general path below
    }
  }
  Tensor& y = c.Output(0, x.dtype(), out_shape);
  const int64_t total = y.elements();
  const bool fp32 = x.dtype() == DataType::kFloat;
  const float* xf = fp32 ? x.data<float>() : nullptr;
  std::vector<const std::vector<Tap>*> at(rank);
  std::vector<size_t> pick(rank);
  std::vector<int64_t> out_at(rank, 0);
  for (int64_t i = 0; i < total; ++i) {
    for (int64_t a = 0; a < rank; ++a) at[a] = &taps[a][out_at[a]];
    double acc = 0;
    bool extrapolated = false;
    std::fill(pick.begin(), pick.end(), 0);
    while (true) {
      double w = 1;
      int64_t src = 0;
      for (int64_t a = 0; a < rank; ++a) {
        const Tap& tap = (*at[a])[pick[a]];
        if (tap.index < 0) extrapolated = true;
        w *= tap.weight;
        src += tap.index * xs[a];
      }
      if (extrapolated) break;
      acc += w * (fp32 ? static_cast<double>(xf[src]) : ElementAsDouble(x, src));
      int64_t a = rank - 1;
      while (a >= 0 && ++pick[a] == at[a]->size()) pick[a--] = 0;
      if (a < 0) break;
    }
    double v = extrapolated ? extrapolation : acc;
    if (!IsFloatType(x.dtype())) v = std::round(v);
    if (fp32) {
      y.mutable_data<float>()[i] = static_cast<float>(v);
    } else {
      SetElementFromDouble(y, i, v);
    }
    for (int64_t a = rank - 1; a >= 0; --a) {  // next output coordinate
      if (++out_at[a] < out_shape[a]) break;
      out_at[a] = 0;
    }
  }
  return Status::Ok();
}

void RegisterResizeKernels(KernelTable& t) {
  t["Resize"] = ResizeKernel;
  t["Upsample"] = ResizeKernel;
}

}  // namespace ortc::exec
