// Pooling kernels beyond the shared semantics test: tiny cases computed by hand (channels last
// included) and the reasons given for what is not generated (the Indices output, column-major
// indices, 4-D windows, channels last for other ops...).
#include "data_movement_test_util.h"

namespace ortc::test::cuda {
namespace {

TEST_CASE("Pooling on 3x3 and padded 2x2 inputs, by hand", "[cuda][pooling]") {
  const cg::OpDesc max = Op("MaxPool", 12, {T(F, {1, 1, 3, 3})}, {T(F, {1, 1, 2, 2})},
                            {AttrInts("kernel_shape", {2, 2})});
  const auto m = RunKernel(max, "hand_maxpool", {Floats({1, 9, 2, 3, 4, 5, 8, 6, 7})});
  CHECK(AsFloats(m[0]) == std::vector<float>{9, 9, 8, 7});
  // 2x2 windows with stride 2 over the input padded by 1: each window holds one real element
  // and three padding positions.
  for (int include : {0, 1}) {
    const cg::OpDesc avg =
        Op("AveragePool", 11, {T(F, {1, 1, 2, 2})}, {T(F, {1, 1, 2, 2})},
           {AttrInts("kernel_shape", {2, 2}), AttrInts("strides", {2, 2}),
            AttrInts("pads", {1, 1, 1, 1}), AttrInt("count_include_pad", include)});
    const auto a =
        RunKernel(avg, "hand_avgpool_" + std::to_string(include), {Floats({1, 2, 3, 4})});
    CHECK(AsFloats(a[0]) ==
          (include ? std::vector<float>{0.25f, 0.5f, 0.75f, 1} : std::vector<float>{1, 2, 3, 4}));
  }
}

TEST_CASE("Channels-last pooling on a 2-channel 2x2 input, by hand", "[cuda][pooling]") {
  // Logical [1, 2, 2, 2]: channel 0 holds 1..4, channel 1 holds 10..40; stored NHWC the two
  // channels alternate. Read as NCHW the same bytes would give maxima 20 and 40.
  const std::string nhwc = Floats({1, 10, 2, 20, 3, 30, 4, 40});
  cg::OpDesc max = Op("MaxPool", 12, {T(F, {1, 2, 2, 2})}, {T(F, {1, 2, 1, 1})},
                      {AttrInts("kernel_shape", {2, 2})});
  max.input_layout = max.output_layout = cg::Layout::kNhwc;
  CHECK(AsFloats(RunKernel(max, "hand_maxpool_nhwc", {nhwc})[0]) == std::vector<float>{4, 40});
  // A 1x1 window copies: NHWC in, NCHW out is a transpose.
  cg::OpDesc copy = Op("AveragePool", 11, {T(F, {1, 2, 2, 2})}, {T(F, {1, 2, 2, 2})},
                       {AttrInts("kernel_shape", {1, 1})});
  copy.input_layout = cg::Layout::kNhwc;
  CHECK(AsFloats(RunKernel(copy, "hand_avgpool_nhwc_nchw", {nhwc})[0]) ==
        std::vector<float>{1, 2, 3, 4, 10, 20, 30, 40});
  cg::OpDesc gap = Op("GlobalAveragePool", 1, {T(F, {1, 2, 2, 2})}, {T(F, {1, 2, 1, 1})});
  gap.input_layout = cg::Layout::kNhwc;
  CHECK(AsFloats(RunKernel(gap, "hand_gap_nhwc", {nhwc})[0]) == std::vector<float>{2.5f, 25});
}

TEST_CASE("Channels last is refused for ops without such a kernel", "[cuda][pooling]") {
  cg::OpDesc relu = Op("Relu", 14, {T(F, {1, 2, 2, 2})}, {T(F, {1, 2, 2, 2})});
  relu.input_layout = relu.output_layout = cg::Layout::kNhwc;
  CHECK_THAT(cg::Unsupported(relu), Catch::Contains("channels-last"));
  CHECK(!cg::EmitOp("relu_nhwc", relu).ok());
  cg::OpDesc mean =
      Op("ReduceMean", 13, {T(F, {1, 2, 2, 2})}, {T(F, {1, 2, 1, 1})}, {AttrInts("axes", {2, 3})});
  mean.input_layout = cg::Layout::kNhwc;
  CHECK_THAT(cg::Unsupported(mean), Catch::Contains("channels-last"));
  CHECK(cg::SupportsLayouts("GlobalMaxPool"));
  CHECK(!cg::SupportsLayouts("Conv"));
}

TEST_CASE("Pooling refusals name their reason", "[cuda][pooling]") {
  cg::OpDesc indices = Op("MaxPool", 12, {T(F, {1, 1, 4, 4})},
                          {T(F, {1, 1, 3, 3}), T(TensorProto::INT64, {1, 1, 3, 3})},
                          {AttrInts("kernel_shape", {2, 2})});
  CHECK_THAT(cg::Unsupported(indices), Catch::Contains("Indices output"));
  indices.outputs[1] = T(0, {});  // the Indices output not wanted: fine
  CHECK(cg::Unsupported(indices).empty());
  cg::OpDesc order = Op("MaxPool", 12, {T(F, {1, 1, 4, 4})}, {T(F, {1, 1, 3, 3})},
                        {AttrInts("kernel_shape", {2, 2}), AttrInt("storage_order", 1)});
  CHECK_THAT(cg::Unsupported(order), Catch::Contains("storage_order"));
  const cg::OpDesc four_d =
      Op("AveragePool", 11, {T(F, {1, 1, 2, 2, 2, 2})}, {T(F, {1, 1, 1, 1, 1, 1})},
         {AttrInts("kernel_shape", {2, 2, 2, 2})});
  CHECK_THAT(cg::Unsupported(four_d), Catch::Contains("1-D, 2-D and 3-D"));
  const cg::OpDesc ints =
      Op("MaxPool", 12, {T(TensorProto::INT8, {1, 1, 4, 4})}, {T(TensorProto::INT8, {1, 1, 3, 3})},
         {AttrInts("kernel_shape", {2, 2})});
  CHECK_THAT(cg::Unsupported(ints), Catch::Contains("INT8"));
  const cg::OpDesc big = Op("MaxPool", 12, {T(F, {1, 1, 2, 2})}, {T(F, {1, 1, 1, 1})},
                            {AttrInts("kernel_shape", {3, 3})});
  CHECK_THAT(cg::Unsupported(big), Catch::Contains("larger than the input"));
}

}  // namespace
}  // namespace ortc::test::cuda
