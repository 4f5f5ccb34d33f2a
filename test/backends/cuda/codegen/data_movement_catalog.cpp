// Data-movement entries of the kernel catalog: every op and attribute variant the generator
// supports, on odd shapes, in float32 plus fp16/bf16/int32/int64/bool variants.
#include "catalog.h"

namespace ortc::test::cuda {
namespace {

using onnx::TensorProto;
constexpr int32_t F = TensorProto::FLOAT, H = TensorProto::FLOAT16, BF = TensorProto::BFLOAT16,
                  I32 = TensorProto::INT32, I64 = TensorProto::INT64, B = TensorProto::BOOL;

cg::TensorDesc None() {
  return T(0, {});
}

// An int64 constant input.
cg::TensorDesc Ints(size_t n) {
  return T(I64, {static_cast<int64_t>(n)});
}

std::vector<double> D(std::vector<int64_t> v) {
  return {v.begin(), v.end()};
}

CatalogEntry E(std::string name, cg::OpDesc op) {
  CatalogEntry e;
  e.name = std::move(name);
  e.op = std::move(op);
  return e;
}

void AddTransposes(std::vector<CatalogEntry>& c) {
  c.push_back(E("dm_transpose_2x3", Op("Transpose", 13, {T(F, {2, 3})}, {T(F, {3, 2})})));
  c.push_back(E("dm_transpose_0231", Op("Transpose", 13, {T(F, {2, 3, 5, 7})}, {T(F, {2, 5, 7, 3})},
                                        {AttrInts("perm", {0, 2, 3, 1})})));
  c.push_back(WithFloatType(c.back(), H));
  c.push_back(WithFloatType(c[c.size() - 2], BF));
  c.push_back(E("dm_transpose_102_i64", Op("Transpose", 13, {T(I64, {3, 4, 5})},
                                           {T(I64, {4, 3, 5})}, {AttrInts("perm", {1, 0, 2})})));
  c.push_back(
      E("dm_transpose_5d_bool", Op("Transpose", 13, {T(B, {2, 1, 3, 4, 2})},
                                   {T(B, {2, 3, 2, 4, 1})}, {AttrInts("perm", {4, 2, 0, 3, 1})})));
  c.push_back(
      E("dm_transpose_i32_rev", Op("Transpose", 1, {T(I32, {3, 1, 7})}, {T(I32, {7, 1, 3})})));
}

void AddConcats(std::vector<CatalogEntry>& c) {
  c.push_back(
      E("dm_concat_axis1_3in", Op("Concat", 13, {T(F, {2, 3, 4}), T(F, {2, 1, 4}), T(F, {2, 5, 4})},
                                  {T(F, {2, 9, 4})}, {AttrInt("axis", 1)})));
  c.push_back(WithFloatType(c.back(), H));
  c.push_back(E("dm_concat_last_i32", Op("Concat", 13, {T(I32, {3, 5}), T(I32, {3, 2})},
                                         {T(I32, {3, 7})}, {AttrInt("axis", -1)})));
  c.push_back(E("dm_concat_axis0", Op("Concat", 11, {T(F, {1, 7}), T(F, {4, 7})}, {T(F, {5, 7})},
                                      {AttrInt("axis", 0)})));
  c.push_back(E("dm_concat_empty_input",
                Op("Concat", 13, {T(I64, {2, 0, 3}), T(I64, {2, 2, 3}), T(I64, {2, 1, 3})},
                   {T(I64, {2, 3, 3})}, {AttrInt("axis", 1)})));
  // A float cache appended with a row computed at fp16 or bf16, converted as it is copied.
  for (int32_t row : {H, BF}) {
    c.push_back(E(row == H ? "dm_concat_append_fp16_row" : "dm_concat_append_bf16_row",
                  Op("Concat", 13, {T(F, {1, 2, 6, 8}), T(row, {1, 2, 1, 8})}, {T(F, {1, 2, 7, 8})},
                     {AttrInt("axis", 2)})));
    c.back().no_cpu_reference =
        "ONNX's Concat takes one type (data_movement_test.cpp checks the conversion by hand)";
  }
}

void AddSlices(std::vector<CatalogEntry>& c) {
  auto slice = [](std::string name, int32_t dt, std::vector<int64_t> in, std::vector<int64_t> out,
                  std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> axes,
                  std::vector<int64_t> steps) {
    std::vector<cg::TensorDesc> inputs = {T(dt, in), Ints(starts.size()), Ints(ends.size()),
                                          axes.empty() ? None() : Ints(axes.size()),
                                          steps.empty() ? None() : Ints(steps.size())};
    if (steps.empty()) inputs.pop_back();
    if (steps.empty() && axes.empty()) inputs.pop_back();
    cg::OpDesc op = Op("Slice", 13, inputs, {T(dt, out)});
    SetConstant(op, 1, D(starts));
    SetConstant(op, 2, D(ends));
    if (!axes.empty()) SetConstant(op, 3, D(axes));
    if (!steps.empty()) SetConstant(op, 4, D(steps));
    return E(std::move(name), std::move(op));
  };
  c.push_back(slice("dm_slice_clamp", F, {5, 7, 9}, {3, 7, 3}, {1, -3}, {4, 100}, {0, 2}, {}));
  c.push_back(WithFloatType(c.back(), BF));
  c.push_back(
      slice("dm_slice_negative_steps", F, {6, 8}, {3, 3}, {-1, 7}, {-100, 0}, {0, 1}, {-2, -3}));
  c.push_back(slice("dm_slice_step2_i64", I64, {4, 11}, {4, 4}, {1}, {9}, {-1}, {2}));
  c.push_back(slice("dm_slice_no_axes", F, {6, 5, 4}, {2, 3, 4}, {2, 1}, {4, -1}, {}, {}));
  c.push_back(WithFloatType(
      slice("dm_slice_reverse_h", F, {2, 3, 5}, {2, 3, 5}, {-1}, {-1000}, {2}, {-1}), H));
  // Opset 1: starts/ends/axes as attributes.
  c.push_back(E("dm_slice_v1_attrs", Op("Slice", 1, {T(F, {4, 6, 3})}, {T(F, {2, 6, 2})},
                                        {AttrInts("starts", {1, 1}), AttrInts("ends", {3, 1000}),
                                         AttrInts("axes", {0, 2})})));
  // int32 starts/ends.
  cg::OpDesc op = Op("Slice", 13, {T(I32, {7, 5}), T(I32, {1}), T(I32, {1})}, {T(I32, {4, 5})});
  SetConstant(op, 1, {2});
  SetConstant(op, 2, {-1});
  c.push_back(E("dm_slice_int32_bounds", op));
}

void AddGathers(std::vector<CatalogEntry>& c) {
  auto gather = [](std::string name, int32_t dt, std::vector<int64_t> in, int32_t it,
                   std::vector<int64_t> idx, std::vector<int64_t> out, int64_t axis) {
    CatalogEntry e = E(std::move(name), Op("Gather", 13, {T(dt, in), T(it, idx)}, {T(dt, out)},
                                           {AttrInt("axis", axis)}));
    int64_t a = axis < 0 ? axis + static_cast<int64_t>(in.size()) : axis;
    const auto dim = static_cast<float>(in[a]);
    e.ranges = {{-3.f, 3.f}, {-dim, dim - 1}};  // every valid index, negatives included
    return e;
  };
  c.push_back(gather("dm_gather_axis0_i64", F, {5, 4}, I64, {2, 3}, {2, 3, 4}, 0));
  c.push_back(WithFloatType(c.back(), H));
  c.push_back(gather("dm_gather_axis1_i32", F, {3, 6, 2}, I32, {4}, {3, 4, 2}, 1));
  c.push_back(gather("dm_gather_scalar_last", I64, {4, 5}, I64, {}, {4}, -1));
  c.push_back(gather("dm_gather_bool", B, {7, 3}, I32, {5, 2}, {5, 2, 3}, 0));
  CatalogEntry e = gather("dm_gather_const_indices", F, {2, 9, 3}, I64, {4}, {2, 4, 3}, 1);
  SetConstant(e.op, 1, {2, -1, 0, 8});
  c.push_back(e);
}

void AddSplits(std::vector<CatalogEntry>& c) {
  cg::OpDesc op = Op("Split", 13, {T(F, {2, 6, 3}), Ints(3)},
                     {T(F, {2, 2, 3}), T(F, {2, 3, 3}), T(F, {2, 1, 3})}, {AttrInt("axis", 1)});
  SetConstant(op, 1, {2, 3, 1});
  c.push_back(E("dm_split_input_sizes", op));
  c.push_back(WithFloatType(c.back(), BF));
  c.push_back(
      E("dm_split_attr_v11", Op("Split", 11, {T(I32, {4, 5})}, {T(I32, {1, 5}), T(I32, {3, 5})},
                                {AttrInt("axis", 0), AttrInts("split", {1, 3})})));
  c.push_back(E("dm_split_num_outputs",
                Op("Split", 18, {T(F, {3, 7})}, {T(F, {3, 3}), T(F, {3, 3}), T(F, {3, 1})},
                   {AttrInt("axis", -1), AttrInt("num_outputs", 3)})));
  c.push_back(
      E("dm_split_equal", Op("Split", 13, {T(I64, {6, 4})}, {T(I64, {3, 4}), T(I64, {3, 4})})));
}

void AddBroadcasts(std::vector<CatalogEntry>& c) {
  cg::OpDesc op = Op("Expand", 13, {T(F, {3, 1}), Ints(3)}, {T(F, {2, 3, 4})});
  SetConstant(op, 1, {2, 1, 4});
  c.push_back(E("dm_expand_rank_up", op));
  c.push_back(WithFloatType(c.back(), H));
  op = Op("Expand", 8, {T(I64, {4, 1, 5}), Ints(3)}, {T(I64, {4, 3, 5})});
  SetConstant(op, 1, {1, 3, 1});
  c.push_back(E("dm_expand_middle_i64", op));
  op = Op("Expand", 13, {T(B, {1, 4}), Ints(3)}, {T(B, {3, 1, 4})});
  SetConstant(op, 1, {3, 1, 1});
  c.push_back(E("dm_expand_bool", op));

  op = Op("Tile", 13, {T(F, {2, 3}), Ints(2)}, {T(F, {4, 9})});
  SetConstant(op, 1, {2, 3});
  c.push_back(E("dm_tile_2d", op));
  c.push_back(WithFloatType(c.back(), BF));
  op = Op("Tile", 13, {T(I32, {3, 1, 2}), Ints(3)}, {T(I32, {3, 4, 4})});
  SetConstant(op, 1, {1, 4, 2});
  c.push_back(E("dm_tile_3d_i32", op));
}

void AddDepthSpace(std::vector<CatalogEntry>& c) {
  c.push_back(E("dm_depth_to_space_dcr", Op("DepthToSpace", 13, {T(F, {1, 8, 3, 4})},
                                            {T(F, {1, 2, 6, 8})}, {AttrInt("blocksize", 2)})));
  c.push_back(WithFloatType(c.back(), H));
  c.push_back(
      E("dm_depth_to_space_crd", Op("DepthToSpace", 13, {T(F, {1, 8, 3, 4})}, {T(F, {1, 2, 6, 8})},
                                    {AttrInt("blocksize", 2), AttrString("mode", "CRD")})));
  c.push_back(E("dm_depth_to_space_crd_b3",
                Op("DepthToSpace", 13, {T(I64, {2, 9, 2, 3})}, {T(I64, {2, 1, 6, 9})},
                   {AttrInt("blocksize", 3), AttrString("mode", "CRD")})));
  c.push_back(E("dm_depth_to_space_dcr_b3", Op("DepthToSpace", 11, {T(F, {2, 18, 2, 3})},
                                               {T(F, {2, 2, 6, 9})}, {AttrInt("blocksize", 3)})));
  c.push_back(E("dm_space_to_depth", Op("SpaceToDepth", 13, {T(F, {2, 3, 4, 6})},
                                        {T(F, {2, 12, 2, 3})}, {AttrInt("blocksize", 2)})));
  c.push_back(WithFloatType(c.back(), BF));
  c.push_back(
      E("dm_space_to_depth_b3_i32", Op("SpaceToDepth", 1, {T(I32, {1, 2, 6, 3})},
                                       {T(I32, {1, 18, 2, 1})}, {AttrInt("blocksize", 3)})));
}

void AddPads(std::vector<CatalogEntry>& c) {
  c.push_back(E("dm_pad_v2_value", Op("Pad", 2, {T(F, {3, 4})}, {T(F, {4, 7})},
                                      {AttrInts("pads", {1, 2, 0, 1}), AttrFloat("value", 1.5f)})));
  c.push_back(WithFloatType(c.back(), H));
  auto pad = [](std::string name, int version, int32_t dt, std::vector<int64_t> in,
                std::vector<int64_t> out, std::vector<int64_t> pads, const std::string& mode,
                std::optional<double> value, std::vector<int64_t> axes = {}) {
    std::vector<cg::TensorDesc> inputs = {T(dt, in), Ints(pads.size()), value ? T(dt, {}) : None()};
    if (!axes.empty()) inputs.push_back(Ints(axes.size()));
    cg::OpDesc op = Op("Pad", version, inputs, {T(dt, out)}, {AttrString("mode", mode)});
    SetConstant(op, 1, D(pads));
    if (value) SetConstant(op, 2, {*value});
    if (!axes.empty()) SetConstant(op, 3, D(axes));
    return E(std::move(name), std::move(op));
  };
  c.push_back(pad("dm_pad_constant_input", 13, F, {1, 2, 3, 4}, {1, 2, 6, 7},
                  {0, 0, 1, 2, 0, 0, 2, 1}, "constant", 0.25));
  c.push_back(WithFloatType(c.back(), BF));
  c.push_back(pad("dm_pad_constant_zero", 11, F, {2, 5}, {5, 6}, {2, 0, 1, 1}, "constant", {}));
  c.push_back(pad("dm_pad_edge", 13, F, {3, 5}, {6, 9}, {2, 1, 1, 3}, "edge", {}));
  c.push_back(pad("dm_pad_reflect", 13, F, {1, 3, 4, 5}, {1, 3, 7, 10}, {0, 0, 2, 3, 0, 0, 1, 2},
                  "reflect", {}));
  c.push_back(WithFloatType(c.back(), H));
  c.push_back(pad("dm_pad_wrap", 19, F, {3, 4}, {6, 8}, {2, 1, 1, 3}, "wrap", {}));
  c.push_back(pad("dm_pad_axes", 18, F, {2, 3, 4}, {2, 3, 7}, {1, 2}, "constant", -2.0, {-1}));
  c.push_back(pad("dm_pad_crop", 13, F, {4, 6}, {3, 5}, {-1, 2, 0, -3}, "constant", {}));
  c.push_back(pad("dm_pad_i64_value", 13, I64, {3, 3}, {5, 4}, {1, 0, 1, 1}, "constant", 7));
  c.push_back(pad("dm_pad_bool_edge", 13, B, {2, 3}, {4, 5}, {1, 1, 1, 1}, "edge", {}));
  // constant_value that is not a compile-time constant: read on the device.
  cg::OpDesc op = Op("Pad", 13, {T(F, {2, 3}), Ints(4), T(F, {})}, {T(F, {3, 5})});
  SetConstant(op, 1, {1, 0, 0, 2});
  c.push_back(E("dm_pad_runtime_value", op));
}

// Resize-13 with X, roi (omitted), scales or sizes.
CatalogEntry Resize(std::string name, int version, int32_t dt, std::vector<int64_t> in,
                    std::vector<int64_t> out, std::vector<double> scales,
                    std::vector<int64_t> sizes, std::vector<onnx::AttributeProto> attrs) {
  std::vector<cg::TensorDesc> inputs = {
      T(dt, in), None(), scales.empty() ? None() : T(F, {static_cast<int64_t>(scales.size())})};
  if (!sizes.empty()) inputs.push_back(Ints(sizes.size()));
  cg::OpDesc op = Op("Resize", version, inputs, {T(dt, out)}, std::move(attrs));
  if (!scales.empty()) SetConstant(op, 2, scales);
  if (!sizes.empty()) SetConstant(op, 3, D(sizes));
  CatalogEntry e = E(std::move(name), std::move(op));
  // Linear: weighted sums in float on the device, in double on the CPU.
  if (dt == F) e.atol = 1e-5;
  return e;
}

// The scales constant stays float32 when the data turns fp16/bf16.
CatalogEntry ResizeAs(const CatalogEntry& e, int32_t dt) {
  CatalogEntry r = e;
  r.name += dt == H ? "_f16" : "_bf16";
  r.op.inputs[0].dtype = dt;
  r.op.outputs[0].dtype = dt;
  return r;
}

void AddResizes(std::vector<CatalogEntry>& c) {
  using A = std::vector<onnx::AttributeProto>;
  auto nearest = [](const std::string& coord, const std::string& rounding) {
    return A{AttrString("mode", "nearest"), AttrString("coordinate_transformation_mode", coord),
             AttrString("nearest_mode", rounding)};
  };
  auto linear = [](const std::string& coord) {
    return A{AttrString("mode", "linear"), AttrString("coordinate_transformation_mode", coord)};
  };
  c.push_back(Resize("dm_resize_nearest_half_pixel", 13, F, {1, 2, 3, 4}, {1, 2, 6, 8},
                     {1, 1, 2, 2}, {}, nearest("half_pixel", "round_prefer_floor")));
  c.push_back(ResizeAs(c.back(), H));
  c.push_back(Resize("dm_resize_nearest_asym_floor", 13, F, {1, 2, 3, 4}, {1, 2, 1, 6},
                     {1, 1, 0.5, 1.5}, {}, nearest("asymmetric", "floor")));
  c.push_back(Resize("dm_resize_nearest_align_ceil", 13, F, {1, 2, 3, 4}, {1, 2, 5, 7}, {},
                     {1, 2, 5, 7}, nearest("align_corners", "round_prefer_ceil")));
  c.push_back(Resize("dm_resize_nearest_pytorch_ceil", 13, F, {1, 2, 3, 4}, {1, 2, 7, 7},
                     {1, 1, 2.5, 1.75}, {}, nearest("pytorch_half_pixel", "ceil")));
  c.push_back(Resize("dm_resize_nearest_tf_nn_i64", 13, I64, {2, 3, 5}, {2, 6, 4}, {}, {2, 6, 4},
                     nearest("tf_half_pixel_for_nn", "round_prefer_floor")));
  c.push_back(Resize("dm_resize_nearest_symmetric", 19, F, {1, 1, 5, 3}, {1, 1, 3, 7}, {},
                     {1, 1, 3, 7}, nearest("half_pixel_symmetric", "round_prefer_ceil")));
  c.push_back(Resize("dm_resize_linear_half_pixel", 13, F, {1, 2, 3, 4}, {1, 2, 6, 8}, {1, 1, 2, 2},
                     {}, linear("half_pixel")));
  c.push_back(ResizeAs(c.back(), H));
  c.push_back(ResizeAs(c[c.size() - 2], BF));
  c.push_back(Resize("dm_resize_linear_align_corners", 13, F, {1, 2, 3, 4}, {1, 2, 5, 9}, {},
                     {1, 2, 5, 9}, linear("align_corners")));
  c.push_back(Resize("dm_resize_linear_asym_down", 13, F, {1, 1, 5, 6}, {1, 1, 3, 3},
                     {1, 1, 0.6, 0.5}, {}, linear("asymmetric")));
  c.push_back(Resize("dm_resize_linear_pytorch_len1", 13, F, {1, 1, 4, 3}, {1, 1, 1, 5}, {},
                     {1, 1, 1, 5}, linear("pytorch_half_pixel")));
  c.push_back(Resize("dm_resize_trilinear", 13, F, {1, 1, 3, 4, 5}, {1, 1, 5, 6, 3}, {},
                     {1, 1, 5, 6, 3}, linear("half_pixel")));
  c.push_back(Resize("dm_resize_linear_axes", 18, F, {2, 3, 4}, {2, 6, 12}, {2, 3}, {},
                     {AttrString("mode", "linear"), AttrInts("axes", {1, 2})}));
  c.push_back(Resize("dm_resize_nearest_axes_sizes", 18, I32, {2, 3, 4}, {2, 3, 10}, {}, {10},
                     {AttrInts("axes", {-1})}));
  // Opset 10: X and scales only; asymmetric coordinates, nearest rounds down.
  for (const char* mode : {"nearest", "linear"}) {
    cg::OpDesc op = Op("Resize", 10, {T(F, {1, 3, 3, 2}), T(F, {4})}, {T(F, {1, 3, 7, 5})},
                       {AttrString("mode", mode)});
    SetConstant(op, 1, {1, 1, 2.5, 2.5});
    CatalogEntry e = E(std::string("dm_resize_v10_") + mode, op);
    e.atol = 1e-5;
    c.push_back(e);
  }
}

}  // namespace

std::vector<CatalogEntry> DataMovementCatalog() {
  std::vector<CatalogEntry> c;
  AddTransposes(c);
  AddConcats(c);
  AddSlices(c);
  AddGathers(c);
  AddSplits(c);
  AddBroadcasts(c);
  AddDepthSpace(c);
  AddPads(c);
  AddResizes(c);
  return c;
}

}  // namespace ortc::test::cuda
