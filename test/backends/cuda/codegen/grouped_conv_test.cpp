// GroupedConv kernels (depthwise and narrow grouped convolutions generated instead of cuDNN
// calls): a depthwise case computed by hand in both layouts, fp16 storage, and the reasons
// given for requests the generator refuses. The emulator tests compare whole models with
// grouped convolutions against the CPU runtime at every precision.
#include "data_movement_test_util.h"

namespace ortc::test::cuda {
namespace {

// Depthwise, 2 channels of 3x3, 2x2 filters, no padding: channel 0 sums the filter's diagonal
// (x[i][j] + x[i+1][j+1]), channel 1 the whole window; biases 0.5 and -200, then Relu.
cg::OpDesc Depthwise(int32_t dtype, cg::Layout layout) {
  cg::OpDesc op = Op("GroupedConv", 1,
                     {T(dtype, {1, 2, 3, 3}), T(dtype, {2, 1, 2, 2}), T(dtype, {2}), T(0, {})},
                     {T(dtype, {1, 2, 2, 2})}, {AttrInt("group", 2), AttrInt("activation", 1)});
  op.input_layout = op.output_layout = layout;
  return op;
}

// The filter [K=2, C=1, 2, 2] stored CRSK: per tap (r, s), filter 0 then filter 1.
const std::vector<float> kFilterCrsk = {1, 1, 0, 1, 0, 1, 1, 1};

TEST_CASE("GroupedConv depthwise 2x2 on two channels, by hand, NCHW and NHWC", "[cuda][conv]") {
  const std::vector<float> bias = {0.5f, -200.f};
  const auto nchw = RunKernel(Depthwise(F, cg::Layout::kNchw), "hand_depthwise_nchw",
                              {Floats({1, 2, 3, 4, 5, 6, 7, 8, 9,  //
                                       10, 20, 30, 40, 50, 60, 70, 80, 90}),
                               Floats(kFilterCrsk), Floats(bias), ""});
  // Channel 1's window sums are 120, 160, 240, 280: minus 200, Relu keeps 40 and 80.
  CHECK(AsFloats(nchw[0]) == std::vector<float>{6.5f, 8.5f, 12.5f, 14.5f, 0, 0, 40, 80});
  const auto nhwc =
      RunKernel(Depthwise(F, cg::Layout::kNhwc), "hand_depthwise_nhwc",
                {Floats({1, 10, 2, 20, 3, 30, 4, 40, 5, 50, 6, 60, 7, 70, 8, 80, 9, 90}),
                 Floats(kFilterCrsk), Floats(bias), ""});
  CHECK(AsFloats(nhwc[0]) == std::vector<float>{6.5f, 0, 8.5f, 0, 12.5f, 40, 14.5f, 80});
}

TEST_CASE("GroupedConv with a residual, padding, stride and Clip, by hand", "[cuda][conv]") {
  // One channel 1x1x3x3 of ones, 3x3 filter of ones, pad 1, stride 2: the four outputs see the
  // corner windows (4 ones each). Residual 1, 2, 3, 10; Clip [0, 6].
  cg::OpDesc op =
      Op("GroupedConv", 1, {T(F, {1, 2, 3, 3}), T(F, {2, 1, 3, 3}), T(0, {}), T(F, {1, 2, 2, 2})},
         {T(F, {1, 2, 2, 2})},
         {AttrInt("group", 2), AttrInts("pads", {1, 1, 1, 1}), AttrInts("strides", {2, 2}),
          AttrInt("activation", 3), AttrFloat("clip_min", 0), AttrFloat("clip_max", 6)});
  const std::vector<float> ones(18, 1.f);
  const auto y = RunKernel(op, "hand_grouped_residual",
                           {Floats(ones), Floats(ones), "", Floats({1, 2, 3, 10, -1, -4, -5, 0})});
  CHECK(AsFloats(y[0]) == std::vector<float>{5, 6, 6, 6, 3, 0, 0, 4});
}

TEST_CASE("GroupedConv at fp16 accumulates in float and rounds once", "[cuda][conv]") {
  // 2049 is not a float16; 2048 + 1 + 1 in float16 steps would stay 2048 (ties to even), while
  // one float sum rounded once gives 2050.
  cg::OpDesc op = Op("GroupedConv", 1,
                     {T(TensorProto::FLOAT16, {1, 1, 1, 3}), T(TensorProto::FLOAT16, {1, 1, 1, 3}),
                      T(0, {}), T(0, {})},
                     {T(TensorProto::FLOAT16, {1, 1, 1, 1})}, {AttrInt("group", 1)});
  // Group 1 is a plain convolution: the generator computes it all the same.
  const uint16_t h2048 = 0x6800, h1 = 0x3c00;
  std::string x(6, '\0'), w(6, '\0');
  const uint16_t xs[3] = {h2048, h1, h1}, ws[3] = {h1, h1, h1};
  std::memcpy(x.data(), xs, 6);
  std::memcpy(w.data(), ws, 6);
  const auto y = RunKernel(op, "hand_grouped_fp16", {x, w, "", ""});
  uint16_t out = 0;
  std::memcpy(&out, y[0].data(), 2);
  CHECK(out == 0x6801);  // 2050 (float16 steps are 2 from 2048 up)
}

TEST_CASE("GroupedConv refusals name their reason", "[cuda][conv]") {
  cg::OpDesc gelu = Depthwise(F, cg::Layout::kNhwc);
  gelu.attributes[1] = AttrInt("activation", 2);
  CHECK_THAT(cg::Unsupported(gelu), Catch::Contains("activation 2"));
  cg::OpDesc groups = Depthwise(F, cg::Layout::kNchw);
  groups.attributes[0] = AttrInt("group", 3);
  CHECK_THAT(cg::Unsupported(groups), Catch::Contains("groups"));
  cg::OpDesc out = Depthwise(F, cg::Layout::kNchw);
  out.outputs[0].dims = {1, 2, 3, 3};
  CHECK(!cg::Unsupported(out).empty());
  cg::OpDesc residual = Depthwise(F, cg::Layout::kNchw);
  residual.inputs[3] = T(F, {1, 2, 3, 3});
  CHECK_THAT(cg::Unsupported(residual), Catch::Contains("residual"));
  cg::OpDesc three_d =
      Op("GroupedConv", 1, {T(F, {1, 2, 3, 3, 3}), T(F, {2, 1, 2, 2, 2}), T(0, {}), T(0, {})},
         {T(F, {1, 2, 2, 2, 2})}, {AttrInt("group", 2)});
  CHECK_THAT(cg::Unsupported(three_d), Catch::Contains("1-D and 2-D"));
  cg::OpDesc ints = Depthwise(TensorProto::INT32, cg::Layout::kNchw);
  CHECK(!cg::Unsupported(ints).empty());
  CHECK(cg::SupportsLayouts("GroupedConv"));
}

}  // namespace
}  // namespace ortc::test::cuda
