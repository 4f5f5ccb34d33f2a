// Sampling an image at computed, fractional positions: GridSample (opsets 16 and 20) and RoiAlign
// (opsets 10 and 16).
//
// GridSample works on any number of spatial dims (opset 20's N-d form; opset 16 is the 2-D case)
// and is separable: per output point, each spatial axis gets a short list of (index, weight)
// taps (1 for nearest, 2 for linear, 4 for cubic) and the point is the weighted sum over their
// product. The taps depend only on the grid, so they are built once per point and reused for
// every channel. Padding acts twice, as in ONNX Runtime: a sample position outside the image's
// bounds is first clamped (border; not for cubic, whose taps alone are clamped) or reflected
// (reflection), then every tap index that still falls outside is clamped, reflected, or reads
// zero (zeros). Nearest rounds half to even.
//
// RoiAlign averages (or takes the max of) bilinear samples on a regular grid inside each output
// bin; sampling_ratio 0 picks ceil(bin size) samples per axis. Samples more than one pixel
// outside the image count as zero, positions within that pixel are clamped to the edge, and
// max mode takes the largest weighted corner value, all as ONNX Runtime does (the reference the
// ONNX tests were generated with). The pre-16 op has no coordinate_transformation_mode and
// behaves as output_half_pixel (no half-pixel shift, rois at least one pixel wide).
//
// Both compute in double and read any numeric input type.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "cpu/runtime/kernels/kernel_util.h"
#include "cpu/runtime/kernels/registry.h"

namespace ortc::exec {
namespace {

std::vector<double> AsDoubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.elements()));
  if (t.dtype() == DataType::kDouble) {
    std::copy_n(t.data<double>(), v.size(), v.begin());
  } else if (t.dtype() == DataType::kFloat) {
    std::copy_n(t.data<float>(), v.size(), v.begin());
  } else {
    for (size_t i = 0; i < v.size(); ++i) v[i] = ElementAsDouble(t, static_cast<int64_t>(i));
  }
  return v;
}

// ---------------------------------------------------------------------------------------------
// GridSample

enum class Interp { kNearest, kLinear, kCubic };
enum class Padding { kZeros, kBorder, kReflection };

// Folds x into [lo, hi] by reflecting at the bounds as often as needed.
double Reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (x >= lo && x <= hi) return x;
  const double dx = x < lo ? lo - x : x - hi;
  const double flips = std::floor(dx / range);
  const double rest = dx - flips * range;
  const bool even = std::fmod(flips, 2.0) == 0;
  if (x < lo) return even ? lo + rest : hi - rest;
  return even ? hi - rest : lo + rest;
}

// Keys cubic convolution weights (a = -0.75) for taps at floor(x) - 1 .. floor(x) + 2.
void CubicWeights(double t, double w[4]) {
  constexpr double a = -0.75;
  auto near = [](double x) { return ((a + 2) * x - (a + 3)) * x * x + 1; };
  auto far = [](double x) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; };
  w[0] = far(t + 1);
  w[1] = near(t);
  w[2] = near(1 - t);
  w[3] = far(2 - t);
}

struct Tap {
  int64_t index;  // -1: reads zero
  double weight;
};

Status GridSample(KernelContext& c) {
  const ExecOp& op = c.op();
  const Tensor& x = c.in(0);
  const Tensor& grid = c.in(1);
  if (x.rank() < 3) return c.Error("X must have rank >= 3 (N, C, spatial...)");
  const int64_t r = x.rank() - 2;
  if (grid.rank() != r + 2 || grid.shape()[0] != x.shape()[0] || grid.shape().back() != r) {
    return c.Error("grid must have shape [N, out spatial..., " + std::to_string(r) +
                   "] for X of rank " + std::to_string(x.rank()));
  }
  if (!IsFloatType(grid.dtype())) return c.Error("grid must be floating-point");
  if (x.dtype() == DataType::kString || x.dtype() == DataType::kUndefined)
    return c.Error("X must be numeric");

  const std::string mode = op.String("mode", op.version >= 20 ? "linear" : "bilinear");
  Interp interp;
  if (mode == "nearest") {
    interp = Interp::kNearest;
  } else if (mode == "linear" || mode == "bilinear") {
    interp = Interp::kLinear;
  } else if (mode == "cubic" || mode == "bicubic") {
    interp = Interp::kCubic;
  } else {
    return c.Error("unknown mode '" + mode + "'");
  }
  const std::string pad_name = op.String("padding_mode", "zeros");
  Padding pad;
  if (pad_name == "zeros") {
    pad = Padding::kZeros;
  } else if (pad_name == "border") {
    pad = Padding::kBorder;
  } else if (pad_name == "reflection") {
    pad = Padding::kReflection;
  } else {
    return c.Error("unknown padding_mode '" + pad_name + "'");
  }
  const bool align = op.Int("align_corners", 0) != 0;

  const int64_t n_batch = x.shape()[0], channels = x.shape()[1];
  const std::vector<int64_t> in_dims(x.shape().begin() + 2, x.shape().end());
  const std::vector<int64_t> in_strides = Strides(in_dims);
  const int64_t in_size = Product(in_dims);
  std::vector<int64_t> out_shape = {n_batch, channels};
  out_shape.insert(out_shape.end(), grid.shape().begin() + 1, grid.shape().end() - 1);
  const int64_t points = Product(out_shape, 2);
  Tensor& y = c.OutputUninit(0, x.dtype(), out_shape);

  const std::vector<double> xv = AsDoubles(x), gv = AsDoubles(grid);
  std::vector<double> out(static_cast<size_t>(y.elements()), 0.0);
  std::vector<std::vector<Tap>> taps(static_cast<size_t>(r));
  std::vector<Tap> combined, next;
  for (int64_t n = 0; n < n_batch; ++n) {
    for (int64_t p = 0; p < points; ++p) {
      const double* g = gv.data() + (n * points + p) * r;
      bool empty = false;
      for (int64_t k = 0; k < r && !empty; ++k) {
        const int64_t size = in_dims[k];
        // The grid lists coordinates innermost axis first (x, y, ...).
        const double v = g[r - 1 - k];
        double pos = align ? (v + 1) / 2 * static_cast<double>(size - 1)
                           : ((v + 1) * static_cast<double>(size) - 1) / 2;
        if (interp == Interp::kNearest) pos = std::nearbyint(pos);
        const double lo = align ? 0.0 : -0.5;
        const double hi = align ? static_cast<double>(size - 1) : static_cast<double>(size) - 0.5;
        if (pos < lo || pos > hi) {  // only outside the bounds: inside, the taps handle it
          if (pad == Padding::kBorder && interp != Interp::kCubic)
            pos = std::clamp(pos, 0.0, static_cast<double>(size - 1));
          if (pad == Padding::kReflection) pos = Reflect(pos, lo, hi);
        }
        // Far outside (or NaN): every tap reads zero; also keeps the integer casts below safe.
        if (size <= 0 || !(pos > -8.0 && pos < static_cast<double>(size) + 8.0)) {
          empty = true;
          break;
        }
        auto& list = taps[static_cast<size_t>(k)];
        list.clear();
        const double base = std::floor(pos), t = pos - base;
        const int64_t i0 = static_cast<int64_t>(base);
        if (interp == Interp::kNearest) {
          list.push_back({static_cast<int64_t>(pos), 1.0});
        } else if (interp == Interp::kLinear) {
          list.push_back({i0, 1 - t});
          list.push_back({i0 + 1, t});
        } else {
          double w[4];
          CubicWeights(t, w);
          for (int j = 0; j < 4; ++j) list.push_back({i0 - 1 + j, w[j]});
        }
        for (Tap& tap : list) {
          if (tap.index >= 0 && tap.index < size) continue;
          if (pad == Padding::kZeros) {
            tap.index = -1;
          } else if (pad == Padding::kBorder) {
            tap.index = std::clamp<int64_t>(tap.index, 0, size - 1);
          } else {
            tap.index = std::clamp<int64_t>(
                static_cast<int64_t>(Reflect(static_cast<double>(tap.index), lo, hi)), 0, size - 1);
          }
        }
      }
      if (empty) continue;  // `out` is already zero
      // The product of the per-axis taps as (flat offset, weight).
      combined.assign(1, {0, 1.0});
      for (int64_t k = 0; k < r; ++k) {
        next.clear();
        for (const Tap& a : combined) {
          for (const Tap& b : taps[static_cast<size_t>(k)]) {
            if (a.index < 0 || b.index < 0) continue;
            next.push_back({a.index + b.index * in_strides[k], a.weight * b.weight});
          }
        }
        combined.swap(next);
      }
      for (int64_t ch = 0; ch < channels; ++ch) {
        const double* src = xv.data() + (n * channels + ch) * in_size;
        double acc = 0;
        for (const Tap& tap : combined) acc += tap.weight * src[tap.index];
        out[static_cast<size_t>((n * channels + ch) * points + p)] = acc;
      }
    }
  }
  for (size_t i = 0; i < out.size(); ++i) SetElementFromDouble(y, static_cast<int64_t>(i), out[i]);
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// RoiAlign

// One bilinear sample: four pixel offsets in the channel plane and their weights.
struct Sample {
  int64_t pos[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};

Sample BilinearSample(double yy, double xx, int64_t height, int64_t width) {
  Sample s;
  if (yy < -1.0 || yy > static_cast<double>(height) || xx < -1.0 ||
      xx > static_cast<double>(width) || height <= 0 || width <= 0) {
    return s;  // outside the image: contributes zero
  }
  yy = std::max(yy, 0.0);
  xx = std::max(xx, 0.0);
  int64_t y0 = static_cast<int64_t>(yy), x0 = static_cast<int64_t>(xx), y1, x1;
  if (y0 >= height - 1) {
    y0 = y1 = height - 1;
    yy = static_cast<double>(y0);
  } else {
    y1 = y0 + 1;
  }
  if (x0 >= width - 1) {
    x0 = x1 = width - 1;
    xx = static_cast<double>(x0);
  } else {
    x1 = x0 + 1;
  }
  const double ly = yy - static_cast<double>(y0), lx = xx - static_cast<double>(x0);
  const double hy = 1 - ly, hx = 1 - lx;
  s.pos[0] = y0 * width + x0;
  s.pos[1] = y0 * width + x1;
  s.pos[2] = y1 * width + x0;
  s.pos[3] = y1 * width + x1;
  s.w[0] = hy * hx;
  s.w[1] = hy * lx;
  s.w[2] = ly * hx;
  s.w[3] = ly * lx;
  return s;
}

Status RoiAlign(KernelContext& c) {
  const ExecOp& op = c.op();
  const Tensor& x = c.in(0);
  const Tensor& rois = c.in(1);
  if (x.rank() != 4) return c.Error("X must be 4-D (N, C, H, W)");
  if (!IsFloatType(x.dtype()) || !IsFloatType(rois.dtype()))
    return c.Error("X and rois must be floating-point");
  if (rois.rank() != 2 || rois.shape()[1] != 4)
    return c.Error("rois must have shape [num_rois, 4]");
  const int64_t num_rois = rois.shape()[0];
  auto batch_indices = IntsOf(c.input(2));
  if (!batch_indices || c.in(2).rank() != 1 ||
      static_cast<int64_t>(batch_indices->size()) != num_rois)
    return c.Error("batch_indices must be a 1-D integer tensor with one entry per roi");
  const int64_t n_batch = x.shape()[0], channels = x.shape()[1];
  const int64_t height = x.shape()[2], width = x.shape()[3];
  for (int64_t b : *batch_indices) {
    if (b < 0 || b >= n_batch)
      return c.Error("batch index " + std::to_string(b) + " is outside [0, " +
                     std::to_string(n_batch) + ")");
  }
  const std::string mode = op.String("mode", "avg");
  if (mode != "avg" && mode != "max") return c.Error("mode must be avg or max");
  const bool is_max = mode == "max";
  const std::string ctm = op.String("coordinate_transformation_mode",
                                    op.version >= 16 ? "half_pixel" : "output_half_pixel");
  if (ctm != "half_pixel" && ctm != "output_half_pixel")
    return c.Error("unknown coordinate_transformation_mode '" + ctm + "'");
  const bool half_pixel = ctm == "half_pixel";
  const int64_t out_h = op.Int("output_height", 1), out_w = op.Int("output_width", 1);
  const int64_t ratio = op.Int("sampling_ratio", 0);
  const double scale = op.Float("spatial_scale", 1.f);
  if (out_h <= 0 || out_w <= 0) return c.Error("output_height/width must be positive");
  if (ratio < 0) return c.Error("sampling_ratio must be >= 0");

  Tensor& y = c.OutputUninit(0, x.dtype(), {num_rois, channels, out_h, out_w});
  const std::vector<double> xv = AsDoubles(x), rv = AsDoubles(rois);
  std::vector<double> out(static_cast<size_t>(y.elements()), 0.0);
  const double offset = half_pixel ? 0.5 : 0.0;
  const int64_t plane = height * width;
  std::vector<Sample> samples;
  for (int64_t roi = 0; roi < num_rois; ++roi) {
    const double* box = rv.data() + roi * 4;
    const double x_start = box[0] * scale - offset, y_start = box[1] * scale - offset;
    double roi_w = box[2] * scale - offset - x_start, roi_h = box[3] * scale - offset - y_start;
    if (!half_pixel) {  // the legacy behaviour: rois are at least one pixel
      roi_w = std::max(roi_w, 1.0);
      roi_h = std::max(roi_h, 1.0);
    }
    const double bin_h = roi_h / static_cast<double>(out_h);
    const double bin_w = roi_w / static_cast<double>(out_w);
    // Negative sizes (a reversed box) sample nothing; NaN or infinite boxes are refused, since
    // their sample positions would convert to pixel indices undefined.
    const double grid_hd = std::max(0.0, ratio > 0 ? static_cast<double>(ratio) : std::ceil(bin_h));
    const double grid_wd = std::max(0.0, ratio > 0 ? static_cast<double>(ratio) : std::ceil(bin_w));
    if (!std::isfinite(x_start) || !std::isfinite(y_start) || !std::isfinite(roi_w) ||
        !std::isfinite(roi_h) || !std::isfinite(grid_hd) || !std::isfinite(grid_wd) ||
        grid_hd * grid_wd * static_cast<double>(out_h) * static_cast<double>(out_w) > 1e8) {
      return c.Error("roi " + std::to_string(roi) + " is not finite or needs too many samples");
    }
    const int64_t grid_h = std::max<int64_t>(static_cast<int64_t>(grid_hd), 0);
    const int64_t grid_w = std::max<int64_t>(static_cast<int64_t>(grid_wd), 0);
    const double count = static_cast<double>(std::max<int64_t>(grid_h * grid_w, 1));
    // Sample positions and weights are the same for every channel.
    samples.clear();
    for (int64_t ph = 0; ph < out_h; ++ph) {
      for (int64_t pw = 0; pw < out_w; ++pw) {
        for (int64_t iy = 0; iy < grid_h; ++iy) {
          const double yy = y_start + static_cast<double>(ph) * bin_h +
                            (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(grid_h);
          for (int64_t ix = 0; ix < grid_w; ++ix) {
            const double xx = x_start + static_cast<double>(pw) * bin_w +
                              (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(grid_w);
            samples.push_back(BilinearSample(yy, xx, height, width));
          }
        }
      }
    }
    const int64_t per_bin = grid_h * grid_w;
    if (plane == 0) continue;  // an empty image: every sample is zero
    for (int64_t ch = 0; ch < channels; ++ch) {
      const double* src = xv.data() + ((*batch_indices)[roi] * channels + ch) * plane;
      double* dst = out.data() + (roi * channels + ch) * out_h * out_w;
      for (int64_t bin = 0; bin < out_h * out_w; ++bin) {
        double acc = 0;
        for (int64_t k = 0; k < per_bin; ++k) {
          const Sample& s = samples[static_cast<size_t>(bin * per_bin + k)];
          if (is_max) {
            double v = s.w[0] * src[s.pos[0]];
            for (int j = 1; j < 4; ++j) v = std::max(v, s.w[j] * src[s.pos[j]]);
            acc = k == 0 ? v : std::max(acc, v);
          } else {
            for (int j = 0; j < 4; ++j) acc += s.w[j] * src[s.pos[j]];
          }
        }
        dst[bin] = is_max ? acc : acc / count;
      }
    }
  }
  for (size_t i = 0; i < out.size(); ++i) SetElementFromDouble(y, static_cast<int64_t>(i), out[i]);
  return Status::Ok();
}

}  // namespace

void RegisterSamplingKernels(KernelTable& t) {
  t["GridSample"] = GridSample;
  t["RoiAlign"] = RoiAlign;
}

}  // namespace ortc::exec
