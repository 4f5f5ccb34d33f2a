// Resize as an index-mapping kernel: nearest (every nearest_mode) and N-D linear, with the
// coordinate transformations half_pixel, half_pixel_symmetric, pytorch_half_pixel,
// align_corners, asymmetric and tf_half_pixel_for_nn, NCHW or channels last on either side.
// Source coordinates are computed here in double and baked as per-axis tables, so the device
// only looks them up.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "cuda/compile/codegen/movement_util.h"

namespace ortc::backends::cuda::codegen::movement {
namespace {

// Tap tables hold one int index and weight pair per output coordinate of each resized axis: they
// are bounded, and so are the source indices they hold (int).
constexpr int64_t kMaxTableLength = int64_t{1} << 24;

// The input coordinate that output coordinate `o` of an axis maps to.
double SourceCoordinate(const std::string& mode, double o, double scale, int64_t in_len,
                        int64_t out_len) {
  const auto in = static_cast<double>(in_len), out = static_cast<double>(out_len);
  if (mode == "half_pixel") return (o + 0.5) / scale - 0.5;
  if (mode == "half_pixel_symmetric") {
    const double adjustment = out / (scale * in);
    return in / 2 * (1 - adjustment) + (o + 0.5) / scale - 0.5;
  }
  if (mode == "pytorch_half_pixel") return out_len > 1 ? (o + 0.5) / scale - 0.5 : 0.0;
  if (mode == "align_corners") {
    // length_resized is scale * length_original (with sizes, scale = out / in).
    const double resized = scale * in;
    return out_len == 1 || resized == 1.0 ? 0.0 : o * (in - 1) / (resized - 1);
  }
  if (mode == "tf_half_pixel_for_nn") return (o + 0.5) / scale;
  return o / scale;  // asymmetric
}

int64_t NearestIndex(const std::string& rounding, double x, int64_t in_len) {
  double r;
  if (rounding == "floor") {
    r = std::floor(x);
  } else if (rounding == "ceil") {
    r = std::ceil(x);
  } else if (rounding == "round_prefer_ceil") {
    r = std::floor(x + 0.5);
  } else {  // round_prefer_floor: halves go down
    r = x - std::floor(x) == 0.5 ? std::floor(x) : std::round(x);
  }
  return std::clamp<int64_t>(static_cast<int64_t>(r), 0, in_len - 1);
}

std::string FloatLit(double v) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.9ef", static_cast<double>(static_cast<float>(v)));
  return buf;
}

template <typename T, typename F>
std::string Table(const std::string& type, const std::string& name, const std::vector<T>& v,
                  F&& text) {
  std::string s =
      "__device__ const " + type + " " + name + "[" + std::to_string(v.size()) + "] = {";
  for (size_t k = 0; k < v.size(); ++k) s += (k ? (k % 16 ? ", " : ",\n    ") : "") + text(v[k]);
  return s + "};\n";
}

struct Plan {
  std::vector<int64_t> out;
  std::vector<double> scales;
};

Result<Plan> OutputShape(const OpDesc& op, const std::vector<int64_t>& in) {
  const auto rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> axes = IntsAttr(op, "axes");
  if (op.since_version < 18 && !axes.empty())
    return InvalidArgument("Resize: axes before opset 18");
  if (axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  for (auto& a : axes) {
    if (!NormaliseAxis(a, rank)) return InvalidArgument("Resize: axis out of range");
  }
  Plan p{in, std::vector<double>(rank, 1.0)};
  const size_t scales_at = op.since_version < 11 ? 1 : 2, sizes_at = 3;
  auto given = [&](size_t i) { return HasInput(op, i) && op.inputs[i].elements() > 0; };
  if (op.since_version >= 11 && given(sizes_at)) {
    if (given(scales_at)) return InvalidArgument("Resize: both scales and sizes are given");
    auto sizes = ConstInts(op, sizes_at, "sizes");
    if (!sizes.ok()) return sizes.status();
    if (sizes->size() != axes.size()) return InvalidArgument("Resize: sizes do not match the axes");
    const std::string policy = StringAttr(op, "keep_aspect_ratio_policy", "stretch");
    if (policy != "stretch")
      return NotImplemented("Resize: keep_aspect_ratio_policy '" + policy + "'");
    for (size_t k = 0; k < axes.size(); ++k) {
      const int64_t a = axes[k];
      if ((*sizes)[k] < 0) return InvalidArgument("Resize: negative size");
      if (in[a] == 0) return NotImplemented("Resize of an empty axis");
      p.out[a] = (*sizes)[k];
      p.scales[a] = static_cast<double>(p.out[a]) / static_cast<double>(in[a]);
    }
  } else if (given(scales_at)) {
    auto scales = ConstFloats(op, scales_at, "scales");
    if (!scales.ok()) return scales.status();
    if (scales->size() != axes.size())
      return InvalidArgument("Resize: scales do not match the axes");
    for (size_t k = 0; k < axes.size(); ++k) {
      const int64_t a = axes[k];
      if (!((*scales)[k] > 0)) return InvalidArgument("Resize: scales must be positive");
      p.scales[a] = (*scales)[k];
      const double length = std::floor(static_cast<double>(in[a]) * p.scales[a]);
      // Checked in double: an infinite or huge scale converts undefined.
      if (!(length <= static_cast<double>(kMaxTableLength)))
        return NotImplemented("Resize: an output axis longer than 2^24 runs on the CPU");
      p.out[a] = static_cast<int64_t>(length);
    }
  } else {
    return NotImplemented("Resize: neither constant scales nor sizes are given");
  }
  for (size_t a = 0; a < in.size(); ++a) {
    if (p.out[a] > kMaxTableLength || in[a] > std::numeric_limits<int32_t>::max())
      return NotImplemented(
          "Resize: an axis longer than the generated tap tables hold (2^24 "
          "outputs, 2^31 inputs) runs on the CPU");
  }
  return p;
}

}  // namespace

Result<KernelSource> EmitResize(const std::string& name, const OpDesc& op) {
  const auto& in = op.inputs[0].dims;
  const int32_t dt = op.inputs[0].dtype;
  const auto rank = static_cast<int64_t>(in.size());
  std::string mode = StringAttr(op, "mode", "nearest");
  if (mode == "cubic") return NotImplemented("Resize: cubic mode is not generated");
  if (mode != "nearest" && mode != "linear")
    return InvalidArgument("Resize: unknown mode '" + mode + "'");
  const bool legacy = op.since_version < 11;
  const std::string coord =
      legacy ? "asymmetric" : StringAttr(op, "coordinate_transformation_mode", "half_pixel");
  const std::string rounding =
      legacy ? "floor" : StringAttr(op, "nearest_mode", "round_prefer_floor");
  if (coord == "tf_crop_and_resize")
    return NotImplemented("Resize: tf_crop_and_resize is not generated");
  if (coord != "half_pixel" && coord != "pytorch_half_pixel" && coord != "align_corners" &&
      coord != "asymmetric" && coord != "tf_half_pixel_for_nn" &&
      !(coord == "half_pixel_symmetric" && op.since_version >= 19))
    return InvalidArgument("Resize: unknown coordinate_transformation_mode '" + coord + "'");
  if (rounding != "round_prefer_floor" && rounding != "round_prefer_ceil" && rounding != "floor" &&
      rounding != "ceil")
    return InvalidArgument("Resize: unknown nearest_mode '" + rounding + "'");
  if (IntAttr(op, "antialias", 0) != 0) return NotImplemented("Resize: antialias is not generated");
  const bool linear = mode == "linear";
  if (linear && !IsFloatType(dt))
    return NotImplemented("Resize: linear mode on " + DtypeName(dt) + " is not generated");
  auto plan = OutputShape(op, in);
  if (!plan.ok()) return plan.status();
  if (std::string why = CheckOutputDims(op, 0, plan->out); !why.empty())
    return InvalidArgument(why);

  KernelText k;
  k.name = name;
  const std::string elem = linear ? FloatStorageType(dt) : BitsType(dt);
  k.input_types.push_back(elem);
  for (size_t i = 1; i < op.inputs.size(); ++i) k.input_types.push_back("");
  k.output_types.push_back(elem);
  k.total = Product(plan->out);
  if (k.total == 0) return Finish(k, Product(in));  // nothing to write
  // Threads walk the output in its storage order (channels last: adjacent threads on adjacent
  // channels of one pixel, which share their taps); c0.. are logical coordinates either way.
  const auto strides = StorageStrides(in, op.input_layout);
  k.body = DecomposeStored("i", plan->out, op.output_layout, "c", "I");
  k.body += "    const I base = 0";
  std::vector<int64_t> resized;
  for (int64_t a = 0; a < rank; ++a) {
    const int64_t out_len = plan->out[a];
    if (out_len == in[a] && plan->scales[a] == 1.0) {  // untouched axis
      if (in[a] > 1) k.body += " + c" + std::to_string(a) + " * " + Lit(strides[a]);
      continue;
    }
    if (in[a] == 0) return NotImplemented("Resize of an empty axis");
    resized.push_back(a);
    std::vector<int> i0(out_len), i1(out_len);
    std::vector<double> w0(out_len), w1(out_len);
    for (int64_t o = 0; o < out_len; ++o) {
      const double x =
          SourceCoordinate(coord, static_cast<double>(o), plan->scales[a], in[a], out_len);
      if (!linear) {
        i0[o] = static_cast<int>(NearestIndex(rounding, x, in[a]));
        continue;
      }
      const double clamped = std::clamp(x, 0.0, static_cast<double>(in[a] - 1));
      const auto lo = static_cast<int64_t>(std::floor(clamped));
      i0[o] = static_cast<int>(lo);
      i1[o] = static_cast<int>(std::min(lo + 1, in[a] - 1));
      w1[o] = clamped - static_cast<double>(lo);
      w0[o] = 1 - w1[o];
    }
    const std::string t = name + "_a" + std::to_string(a);
    auto int_text = [](int v) { return std::to_string(v); };
    k.globals += Table("int", t + "_i0", i0, int_text);
    if (linear) {
      k.globals += Table("int", t + "_i1", i1, int_text);
      k.globals += Table("float", t + "_w0", w0, FloatLit);
      k.globals += Table("float", t + "_w1", w1, FloatLit);
    }
  }
  k.body += ";\n";
  if (!linear) {
    k.body += "    const I src = base";
    for (int64_t a : resized) {
      const std::string c = Var("c", a);
      k.body += " + (I)" + name + "_a" + std::to_string(a) + "_i0[" + c + "] * " + Lit(strides[a]);
    }
    k.body += ";\n    out0[i] = in0[src];\n";
    return Finish(k, std::max(Product(in), k.total));
  }
  // Linear: the product of two taps per resized axis; taps of weight 0 are skipped (they are the
  // exact-hit case, where the CPU kernel has a single tap).
  k.body += "    float acc = 0.f;\n";
  std::string indent = "    ", prev_w = "1.f", prev_s = "base";
  for (size_t j = 0; j < resized.size(); ++j) {
    const std::string a = std::to_string(resized[j]), t = name + "_a" + a, n = std::to_string(j);
    const std::string c = "c" + a;
    k.body += indent + "for (int t" + n + " = 0; t" + n + " < 2; ++t" + n + ") {\n";
    indent += "  ";
    k.body += indent + "const float tw" + n + " = t" + n + " ? " + t + "_w1[" + c + "] : " + t +
              "_w0[" + c + "];\n";
    k.body += indent + "if (tw" + n + " == 0.f) continue;\n";
    k.body += indent + "const float w" + n + " = " + prev_w + " * tw" + n + ";\n";
    k.body += indent + "const I s" + n + " = " + prev_s + " + (I)(t" + n + " ? " + t + "_i1[" + c +
              "] : " + t + "_i0[" + c + "]) * " + Lit(strides[resized[j]]) + ";\n";
    prev_w = "w" + n;
    prev_s = "s" + n;
  }
  k.body += indent + "acc += " + prev_w + " * " + LoadExpr(dt, "in0[" + prev_s + "]") + ";\n";
  for (size_t j = 0; j < resized.size(); ++j) {
    indent.resize(indent.size() - 2);
    k.body += indent + "}\n";
  }
  k.body += "    out0[i] = " + StoreExpr(dt, "acc") + ";\n";
  return Finish(k, std::max(Product(in), k.total));
}

}  // namespace ortc::backends::cuda::codegen::movement
