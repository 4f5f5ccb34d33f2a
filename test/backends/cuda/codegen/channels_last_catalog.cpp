// Channels-last entries of the kernel catalog: elementwise groups reading and writing NHWC
// (per-channel broadcast operands, mixed layouts, both layouts written, boundary casts), and
// Concat, Pad, Resize, Transpose and BatchNormalization over NHWC data, same and mixed layouts
// on the two sides.
#include "catalog.h"

namespace ortc::test::cuda {
namespace {

using onnx::TensorProto;
constexpr int32_t F = TensorProto::FLOAT, H = TensorProto::FLOAT16, BF = TensorProto::BFLOAT16,
                  I64 = TensorProto::INT64;
constexpr auto L = cg::Layout::kNhwc, N = cg::Layout::kNchw;

const char* Tag(cg::Layout l) {
  return l == L ? "nhwc" : "nchw";
}

// The entry, then its fp16 and bf16 copies.
void AddTyped(std::vector<CatalogEntry>& c, CatalogEntry e) {
  c.push_back(std::move(e));
  c.push_back(WithFloatType(c.back(), H));
  c.push_back(WithFloatType(c[c.size() - 2], BF));
}

cg::OpDesc Binary(const std::string& type, std::vector<int64_t> a, std::vector<int64_t> b,
                  std::vector<int64_t> out) {
  return Op(type, 14, {T(F, std::move(a)), T(F, std::move(b))}, {T(F, std::move(out))});
}
cg::OpDesc Unary(const std::string& type, int version, std::vector<int64_t> dims,
                 std::vector<onnx::AttributeProto> attrs = {}) {
  return Op(type, version, {T(F, dims)}, {T(F, dims)}, std::move(attrs));
}

CatalogEntry Group(std::string name, cg::FusedGroup g) {
  CatalogEntry e;
  e.name = "cl_" + std::move(name);
  e.group = std::move(g);
  return e;
}

// Elementwise groups. x is [2, 5, 3, 4] (C = 5, W = 4: a [C] operand would run along W, so the
// channel operands below are the [C, 1, 1] / [1, C, 1, 1] / [N, C, 1, 1] forms).
void AddGroups(std::vector<CatalogEntry>& c) {
  const std::vector<int64_t> x = {2, 5, 3, 4}, se = {2, 5, 1, 1};
  {
    // Squeeze-and-excitation: x * s with s [N, C, 1, 1], then the residual x + x * s.
    cg::FusedGroup g;
    g.inputs = {T(F, x), T(F, se)};
    g.ops.push_back({Binary("Mul", x, se, x), {0, 1}});
    g.ops.push_back({Binary("Add", x, x, x), {0, -1}});
    g.outputs = {1};
    g.input_layouts = {L, N};
    g.output_layouts = {L};
    AddTyped(c, Group("se_mul_add", g));
  }
  {
    // Per-channel scale and shift (a BatchNorm folded by an exporter), then Relu.
    cg::FusedGroup g;
    g.inputs = {T(F, x), T(F, {5, 1, 1}), T(F, {1, 5, 1, 1})};
    g.ops.push_back({Binary("Mul", x, {5, 1, 1}, x), {0, 1}});
    g.ops.push_back({Binary("Add", x, {1, 5, 1, 1}, x), {-1, 2}});
    g.ops.push_back({Unary("Relu", 14, x), {-2}});
    g.outputs = {2};
    g.input_layouts = {L, N, N};
    g.output_layouts = {L};
    AddTyped(c, Group("scale_shift_relu", g));
  }
  {
    // Sub and Div by channel constants, a scalar, and an operand broadcast along H and W only
    // ([1, 1, 3, 4]) and along W only ([4]): their strides are not per channel.
    cg::FusedGroup g;
    g.inputs = {T(F, x),  T(F, {5, 1, 1}),    T(F, {1, 5, 1, 1}),
                T(F, {}), T(F, {1, 1, 3, 4}), T(F, {4})};
    g.ops.push_back({Binary("Sub", x, {5, 1, 1}, x), {0, 1}});
    g.ops.push_back({Binary("Div", x, {1, 5, 1, 1}, x), {-1, 2}});
    g.ops.push_back({Binary("Mul", x, {}, x), {-2, 3}});
    g.ops.push_back({Binary("Add", x, {1, 1, 3, 4}, x), {-3, 4}});
    g.ops.push_back({Binary("Sub", x, {4}, x), {-4, 5}});
    g.outputs = {4};
    g.input_layouts = {L, N, N, N, N, N};
    g.output_layouts = {L};
    CatalogEntry e = Group("sub_div_broadcasts", g);
    e.ranges = {{-3.f, 3.f}, {-1.f, 1.f}, {0.5f, 2.f}};
    AddTyped(c, e);
  }
  {
    // PRelu with a per-channel [C] slope (applied along axis 1, not numpy's last axis).
    cg::FusedGroup g;
    g.inputs = {T(F, x), T(F, {5})};
    g.ops.push_back({Op("PRelu", 16, {T(F, x), T(F, {5})}, {T(F, x)}), {0, 1}});
    g.outputs = {0};
    g.input_layouts = {L, N};
    g.output_layouts = {L};
    c.push_back(Group("prelu_channel_slope", g));
  }
  {
    // Mixed inputs (one NHWC, one NCHW), the result written in both layouts, and an
    // intermediate written NCHW only: walks NHWC, stores NCHW through coordinates.
    cg::FusedGroup g;
    g.inputs = {T(F, x), T(F, x), T(F, se)};
    g.ops.push_back({Binary("Add", x, x, x), {0, 1}});
    g.ops.push_back({Unary("Sigmoid", 13, x), {-1}});
    g.ops.push_back({Binary("Mul", x, se, x), {-2, 2}});
    g.outputs = {2, 2, 0};
    g.input_layouts = {L, N, N};
    g.output_layouts = {L, N, N};
    AddTyped(c, Group("mixed_both_layouts", g));
  }
  {
    // An NHWC input walked in NCHW order (the result's reader needs NCHW).
    cg::FusedGroup g;
    g.inputs = {T(F, x), T(F, se)};
    g.ops.push_back({Unary("HardSigmoid", 6, x), {0}});
    g.ops.push_back({Binary("Mul", x, se, x), {-1, 1}});
    g.outputs = {1};
    g.input_layouts = {L, N};
    g.output_layouts = {N};
    c.push_back(Group("nhwc_in_nchw_out", g));
  }
  {
    // The program's boundary casts: fp32 NCHW input -> fp16/bf16 NHWC, and back.
    for (int32_t to : {H, BF}) {
      const std::string t = to == H ? "f16" : "bf16";
      cg::FusedGroup in;
      in.inputs = {T(F, {1, 3, 7, 6})};
      in.ops.push_back(
          {Op("Cast", 13, {T(F, {1, 3, 7, 6})}, {T(to, {1, 3, 7, 6})}, {AttrInt("to", to)}), {0}});
      in.outputs = {0};
      in.input_layouts = {N};
      in.output_layouts = {L};
      c.push_back(Group("cast_in_" + t, in));
      cg::FusedGroup out;
      out.inputs = {T(to, x)};
      out.ops.push_back({Op("Cast", 13, {T(to, x)}, {T(F, x)}, {AttrInt("to", F)}), {0}});
      out.outputs = {0};
      out.input_layouts = {L};
      out.output_layouts = {N};
      c.push_back(Group("cast_out_" + t, out));
    }
  }
  {
    // Rank 3: [N, C, L] stored [N, L, C], 7 channels scaled by a [C, 1] operand.
    const std::vector<int64_t> r3 = {3, 7, 5};
    cg::FusedGroup g;
    g.inputs = {T(F, r3), T(F, {7, 1})};
    g.ops.push_back({Binary("Mul", r3, {7, 1}, r3), {0, 1}});
    g.outputs = {0};
    g.input_layouts = {L, N};
    g.output_layouts = {L};
    c.push_back(Group("rank3_channel_scale", g));
  }
}

CatalogEntry Layouts(std::string name, cg::OpDesc op, cg::Layout in, cg::Layout out) {
  CatalogEntry e;
  e.name = "cl_" + std::move(name) + "_" + Tag(in) + "_" + Tag(out);
  op.input_layout = in;
  op.output_layout = out;
  e.op = std::move(op);
  return e;
}

// Each entry with the layout pairs (NHWC, NHWC), (NHWC, NCHW) and (NCHW, NHWC); `typed` adds
// fp16/bf16 copies of the first.
void AddLayoutPairs(std::vector<CatalogEntry>& c, const std::string& name, const cg::OpDesc& op,
                    bool typed, double atol = 0) {
  const std::pair<cg::Layout, cg::Layout> pairs[] = {{L, L}, {L, N}, {N, L}};
  for (size_t p = 0; p < 3; ++p) {
    CatalogEntry e = Layouts(name, op, pairs[p].first, pairs[p].second);
    e.atol = atol;
    if (p == 0 && typed) {
      AddTyped(c, e);
    } else {
      c.push_back(e);
    }
  }
}

void AddConcats(std::vector<CatalogEntry>& c) {
  // Channels of three inputs (odd counts), the FPN case.
  AddLayoutPairs(c, "concat_channels",
                 Op("Concat", 13, {T(F, {2, 3, 4, 5}), T(F, {2, 1, 4, 5}), T(F, {2, 6, 4, 5})},
                    {T(F, {2, 10, 4, 5})}, {AttrInt("axis", 1)}),
                 true);
  AddLayoutPairs(c, "concat_height",
                 Op("Concat", 13, {T(F, {1, 3, 2, 5}), T(F, {1, 3, 4, 5})}, {T(F, {1, 3, 6, 5})},
                    {AttrInt("axis", -2)}),
                 false);
  AddLayoutPairs(c, "concat_width",
                 Op("Concat", 13, {T(F, {2, 4, 3, 1}), T(F, {2, 4, 3, 3})}, {T(F, {2, 4, 3, 4})},
                    {AttrInt("axis", 3)}),
                 false);
  AddLayoutPairs(c, "concat_batch",
                 Op("Concat", 13, {T(F, {1, 3, 2, 2}), T(F, {2, 3, 2, 2})}, {T(F, {3, 3, 2, 2})},
                    {AttrInt("axis", 0)}),
                 false);
  // An empty input is never read; int64 moves as bits like any element.
  AddLayoutPairs(
      c, "concat_empty_i64",
      Op("Concat", 13, {T(I64, {1, 2, 3, 3}), T(I64, {1, 0, 3, 3}), T(I64, {1, 1, 3, 3})},
         {T(I64, {1, 3, 3, 3})}, {AttrInt("axis", 1)}),
      false);
}

cg::OpDesc PadOp(std::vector<int64_t> in, std::vector<int64_t> out, std::vector<int64_t> pads,
                 const std::string& mode, std::optional<double> value) {
  cg::OpDesc op = Op("Pad", 13,
                     {T(F, std::move(in)), T(I64, {static_cast<int64_t>(pads.size())}),
                      value ? T(F, {}) : T(0, {})},
                     {T(F, std::move(out))}, {AttrString("mode", mode)});
  SetConstant(op, 1, {pads.begin(), pads.end()});
  if (value) SetConstant(op, 2, {*value});
  return op;
}

void AddPads(std::vector<CatalogEntry>& c) {
  // Spatial pads (asymmetric), a constant value, reflect and edge; a channel pad and a crop.
  AddLayoutPairs(c, "pad_constant",
                 PadOp({2, 3, 4, 5}, {2, 3, 7, 6}, {0, 0, 1, 0, 0, 0, 2, 1}, "constant", 0.5),
                 true);
  AddLayoutPairs(c, "pad_reflect",
                 PadOp({1, 4, 4, 5}, {1, 4, 7, 9}, {0, 0, 2, 3, 0, 0, 1, 1}, "reflect", {}), false);
  AddLayoutPairs(c, "pad_edge",
                 PadOp({1, 3, 3, 4}, {1, 3, 5, 5}, {0, 0, 1, 0, 0, 0, 1, 1}, "edge", {}), false);
  AddLayoutPairs(c, "pad_channels_crop",
                 PadOp({1, 3, 4, 5}, {1, 5, 3, 5}, {0, 1, 0, 0, 0, 1, -1, 0}, "constant", {}),
                 false);
}

cg::OpDesc ResizeOp(std::vector<int64_t> in, std::vector<int64_t> out, std::vector<double> scales,
                    std::vector<int64_t> sizes, std::vector<onnx::AttributeProto> attrs) {
  std::vector<cg::TensorDesc> inputs = {
      T(F, std::move(in)), T(0, {}),
      scales.empty() ? T(0, {}) : T(F, {static_cast<int64_t>(scales.size())})};
  if (!sizes.empty()) inputs.push_back(T(I64, {static_cast<int64_t>(sizes.size())}));
  cg::OpDesc op = Op("Resize", 13, inputs, {T(F, std::move(out))}, std::move(attrs));
  if (!scales.empty()) SetConstant(op, 2, scales);
  if (!sizes.empty()) SetConstant(op, 3, {sizes.begin(), sizes.end()});
  return op;
}

// WithFloatType would turn Resize's scales fp16 too; they stay float32 (lowering_precision.cpp).
void AddResizeTyped(std::vector<CatalogEntry>& c, const CatalogEntry& e) {
  c.push_back(e);
  for (int32_t dt : {H, BF}) {
    CatalogEntry r = e;
    r.name += dt == H ? "_f16" : "_bf16";
    r.op.inputs[0].dtype = r.op.outputs[0].dtype = dt;
    c.push_back(r);
  }
}

void AddResizes(std::vector<CatalogEntry>& c) {
  using A = std::vector<onnx::AttributeProto>;
  const A nearest = {AttrString("mode", "nearest"),
                     AttrString("coordinate_transformation_mode", "asymmetric"),
                     AttrString("nearest_mode", "floor")};
  const A linear = {AttrString("mode", "linear"),
                    AttrString("coordinate_transformation_mode", "half_pixel")};
  const A corners = {AttrString("mode", "linear"),
                     AttrString("coordinate_transformation_mode", "align_corners")};
  const std::pair<cg::Layout, cg::Layout> pairs[] = {{L, L}, {L, N}, {N, L}};
  for (const auto& [in, out] : pairs) {
    // FPN's 2x nearest upsampling by scales, a nearest resize by sizes (odd ratios), bilinear
    // up (half_pixel) and down (align_corners).
    const bool both_last = in == L && out == L;
    CatalogEntry up =
        Layouts("resize_nearest_2x",
                ResizeOp({2, 3, 3, 4}, {2, 3, 6, 8}, {1, 1, 2, 2}, {}, nearest), in, out);
    if (both_last) {
      AddResizeTyped(c, up);
    } else {
      c.push_back(up);
    }
    c.push_back(Layouts("resize_nearest_sizes",
                        ResizeOp({1, 5, 3, 4}, {1, 5, 7, 5}, {}, {1, 5, 7, 5}, nearest), in, out));
    CatalogEntry lin =
        Layouts("resize_linear_up", ResizeOp({1, 4, 3, 4}, {1, 4, 6, 8}, {1, 1, 2, 2}, {}, linear),
                in, out);
    lin.atol = 1e-5;  // weighted sums in float on the device, in double on the CPU
    if (both_last) {
      AddResizeTyped(c, lin);
    } else {
      c.push_back(lin);
    }
    CatalogEntry down =
        Layouts("resize_linear_down",
                ResizeOp({1, 3, 7, 6}, {1, 3, 4, 3}, {}, {1, 3, 4, 3}, corners), in, out);
    down.atol = 1e-5;
    c.push_back(down);
  }
}

void AddTransposes(std::vector<CatalogEntry>& c) {
  // The layout change itself read from or written to channels last (composed permutations),
  // and an arbitrary permutation.
  AddLayoutPairs(c, "transpose_0231",
                 Op("Transpose", 13, {T(F, {2, 3, 4, 5})}, {T(F, {2, 4, 5, 3})},
                    {AttrInts("perm", {0, 2, 3, 1})}),
                 true);
  AddLayoutPairs(c, "transpose_0213",
                 Op("Transpose", 13, {T(F, {2, 3, 4, 5})}, {T(F, {2, 4, 3, 5})},
                    {AttrInts("perm", {0, 2, 1, 3})}),
                 false);
}

void AddBatchNorms(std::vector<CatalogEntry>& c) {
  // Inference BatchNormalization (not folded: after a ConvTranspose's bias Add), 4-D and 3-D.
  for (const std::vector<int64_t>& x : {std::vector<int64_t>{2, 5, 3, 4}, {2, 6, 7}}) {
    const cg::TensorDesc p = T(F, {x[1]});
    cg::OpDesc op = Op("BatchNormalization", 15, {T(F, x), p, p, p, p}, {T(F, x)},
                       {AttrFloat("epsilon", 1e-3f)});
    const std::string name = "batchnorm_" + std::to_string(x.size()) + "d";
    for (const auto& [in, out] :
         std::vector<std::pair<cg::Layout, cg::Layout>>{{L, L}, {L, N}, {N, L}}) {
      CatalogEntry e = Layouts(name, op, in, out);
      // The variance must be positive; the scale and mean are any values.
      e.ranges = {{-3.f, 3.f}, {0.5f, 2.f}, {-1.f, 1.f}, {-1.f, 1.f}, {0.2f, 2.f}};
      e.atol = 1e-5;
      if (x.size() == 4 && in == L && out == L) {
        AddTyped(c, e);
      } else {
        c.push_back(e);
      }
    }
  }
}

}  // namespace

std::vector<CatalogEntry> ChannelsLastCatalog() {
  std::vector<CatalogEntry> c;
  AddGroups(c);
  AddConcats(c);
  AddPads(c);
  AddResizes(c);
  AddTransposes(c);
  AddBatchNorms(c);
  return c;
}

}  // namespace ortc::test::cuda
