// Channels-last kernels beyond the shared semantics test: tiny cases computed by hand (a
// squeeze-and-excitation multiply, channel concatenation, a padded and a resized NHWC image, the
// input cast) and the refusals that keep NHWC data away from kernels that would misread it.
#include "data_movement_test_util.h"

namespace ortc::test::cuda {
namespace {

constexpr auto L = cg::Layout::kNhwc, N = cg::Layout::kNchw;

std::vector<std::string> RunGroup(const cg::FusedGroup& g, const std::string& name,
                                  std::vector<std::string> inputs) {
  auto k = cg::EmitFused(name, g);
  INFO(name << ": " << k.status().message());
  REQUIRE(k.ok());
  auto module = HostModule::Compile({k.value()});
  INFO(module.status().message());
  REQUIRE(module.ok());
  std::vector<std::string> outs;
  for (int o : g.outputs) {
    const auto& t = g.ops[o].op.outputs[0];
    outs.emplace_back(static_cast<size_t>(t.elements()) * (t.dtype == F ? 4 : 2), '\x7f');
  }
  std::vector<void*> args;
  for (auto& b : inputs) args.push_back(b.data());
  for (auto& o : outs) args.push_back(o.data());
  REQUIRE(module.value().Launch(k.value(), args).ok());
  return outs;
}

// Logical [1, 2, 2, 2]: channel 0 holds 1..4, channel 1 holds 10..40; NHWC alternates them.
const std::vector<float> kNhwc = {1, 10, 2, 20, 3, 30, 4, 40};

TEST_CASE("Channels-last x * s with s [N, C, 1, 1], by hand", "[cuda][channels_last]") {
  cg::FusedGroup g;
  g.inputs = {T(F, {1, 2, 2, 2}), T(F, {1, 2, 1, 1})};
  g.ops.push_back(
      {Op("Mul", 14, {T(F, {1, 2, 2, 2}), T(F, {1, 2, 1, 1})}, {T(F, {1, 2, 2, 2})}), {0, 1}});
  g.outputs = {0, 0};
  g.input_layouts = {L, N};
  g.output_layouts = {L, N};  // the same result in both layouts
  const auto out = RunGroup(g, "hand_se_nhwc", {Floats(kNhwc), Floats({2, -1})});
  CHECK(AsFloats(out[0]) == std::vector<float>{2, -10, 4, -20, 6, -30, 8, -40});
  CHECK(AsFloats(out[1]) == std::vector<float>{2, 4, 6, 8, -10, -20, -30, -40});
}

TEST_CASE("Channels-last concatenation of channels, by hand", "[cuda][channels_last]") {
  // [1, 1, 2, 2] (the same bytes in both layouts) then the 2-channel image: 3 channels per
  // pixel, the new one first.
  cg::OpDesc cat = Op("Concat", 13, {T(F, {1, 1, 2, 2}), T(F, {1, 2, 2, 2})}, {T(F, {1, 3, 2, 2})},
                      {AttrInt("axis", 1)});
  cat.input_layout = cat.output_layout = L;
  const auto out = RunKernel(cat, "hand_concat_nhwc", {Floats({-1, -2, -3, -4}), Floats(kNhwc)})[0];
  CHECK(AsFloats(out) == std::vector<float>{-1, 1, 10, -2, 2, 20, -3, 3, 30, -4, 4, 40});
  cat.output_layout = N;
  CHECK(AsFloats(RunKernel(cat, "hand_concat_nhwc_nchw",
                           {Floats({-1, -2, -3, -4}), Floats(kNhwc)})[0]) ==
        std::vector<float>{-1, -2, -3, -4, 1, 2, 3, 4, 10, 20, 30, 40});
}

TEST_CASE("Channels-last Pad and Resize of a 2x2 image, by hand", "[cuda][channels_last]") {
  // One column of zeros on the left: pixels (0, 0) and (1, 0) are new.
  cg::OpDesc pad =
      Op("Pad", 13, {T(F, {1, 2, 2, 2}), T(TensorProto::INT64, {8})}, {T(F, {1, 2, 2, 3})});
  SetConstant(pad, 1, {0, 0, 0, 1, 0, 0, 0, 0});
  pad.input_layout = pad.output_layout = L;
  CHECK(AsFloats(RunKernel(pad, "hand_pad_nhwc", {Floats(kNhwc), ""})[0]) ==
        std::vector<float>{0, 0, 1, 10, 2, 20, 0, 0, 3, 30, 4, 40});
  // Nearest 2x along W only: every pixel twice.
  cg::OpDesc up =
      Op("Resize", 13, {T(F, {1, 2, 2, 2}), T(0, {}), T(F, {4})}, {T(F, {1, 2, 2, 4})},
         {AttrString("mode", "nearest"), AttrString("coordinate_transformation_mode", "asymmetric"),
          AttrString("nearest_mode", "floor")});
  SetConstant(up, 2, {1, 1, 1, 2});
  up.input_layout = up.output_layout = L;
  CHECK(AsFloats(RunKernel(up, "hand_resize_nhwc", {Floats(kNhwc), "", ""})[0]) ==
        std::vector<float>{1, 10, 1, 10, 2, 20, 2, 20, 3, 30, 3, 30, 4, 40, 4, 40});
}

TEST_CASE("The input cast writes NHWC directly", "[cuda][channels_last]") {
  cg::FusedGroup g;
  g.inputs = {T(F, {1, 2, 2, 2})};
  g.ops.push_back({Op("Cast", 13, {T(F, {1, 2, 2, 2})}, {T(TensorProto::FLOAT16, {1, 2, 2, 2})},
                      {AttrInt("to", TensorProto::FLOAT16)}),
                   {0}});
  g.outputs = {0};
  g.input_layouts = {N};
  g.output_layouts = {L};
  const auto out = RunGroup(g, "hand_cast_in_nhwc", {Floats({1, 2, 3, 4, 10, 20, 30, 40})});
  std::vector<uint16_t> h(8);
  std::memcpy(h.data(), out[0].data(), 16);
  // 1 = 0x3c00, 10 = 0x4900, 2 = 0x4000, 20 = 0x4d00, ...: the channels interleaved.
  CHECK(h == std::vector<uint16_t>{0x3c00, 0x4900, 0x4000, 0x4d00, 0x4200, 0x4f80, 0x4400, 0x5100});
}

TEST_CASE("Channels last is refused where a kernel would misread it", "[cuda][channels_last]") {
  // Slice, Split and views index in the order of their dims.
  cg::OpDesc slice =
      Op("Slice", 13, {T(F, {1, 2, 2, 2}), T(TensorProto::INT64, {1}), T(TensorProto::INT64, {1})},
         {T(F, {1, 1, 2, 2})});
  SetConstant(slice, 1, {0});
  SetConstant(slice, 2, {1});
  slice.input_layout = L;
  CHECK_THAT(cg::Unsupported(slice), Catch::Contains("channels-last"));
  // Channels last needs N, C and a spatial axis.
  cg::OpDesc flat =
      Op("Concat", 13, {T(F, {2, 3}), T(F, {2, 3})}, {T(F, {2, 6})}, {AttrInt("axis", 1)});
  flat.input_layout = L;
  CHECK_THAT(cg::Unsupported(flat), Catch::Contains("rank 2"));
  flat.input_layout = N;
  flat.output_layout = L;
  CHECK_THAT(cg::Unsupported(flat), Catch::Contains("output of rank below 3"));
  cg::FusedGroup g;
  g.inputs = {T(F, {2, 3})};
  g.ops.push_back({Op("Relu", 14, {T(F, {2, 3})}, {T(F, {2, 3})}), {0}});
  g.outputs = {0};
  g.input_layouts = {L};
  CHECK_THAT(cg::EmitFused("bad_rank", g).status().message(), Catch::Contains("rank 2"));
  CHECK(cg::SupportsLayouts("Concat"));
  CHECK(cg::SupportsLayouts("Resize"));
  CHECK(!cg::SupportsLayouts("Slice"));
  CHECK(cg::LayoutApplies("Concat", 3));
  CHECK(!cg::LayoutApplies("Resize", 2));
}

}  // namespace
}  // namespace ortc::test::cuda
