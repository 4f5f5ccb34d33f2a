// Global pools over a channels-last input of many positions run as two steps: runs of positions
// reduced into float partials, then their merge into the output; few positions, or NCHW input,
// keep the one-step pool.
#include <catch2/catch.hpp>

#include "cuda/compile/codegen/kernel_codegen.h"
#include "cuda/compile/codegen/kernel_text.h"
#include "plan_helpers.h"
#include "test_data.h"

using namespace ortc::backends::cuda;
using ortc::test::Attr;
using ortc::test::ModelBuilder;
using ortc::test::cuda::PlanAll;
using ortc::test::cuda::StepsOf;

namespace {

// x [2, 3, side, side] -> Conv 3x3 to 40 channels (fp16/bf16: NHWC) -> Relu -> GlobalAveragePool
// and GlobalMaxPool, both outputs. 40 channels: one full run of 32 lanes and a partial one.
ModelBuilder PoolsModel(int64_t side) {
  ModelBuilder b(13, 8);
  b.Input("x", {2, 3, side, side});
  b.Initializer("W", {40, 3, 3, 3}, std::vector<float>(40 * 27, 0.05f));
  b.Node("Conv", {"x", "W"}, {"c"}, {Attr("pads", std::vector<int64_t>{1, 1, 1, 1})}, "conv");
  b.Node("Relu", {"c"}, {"r"}, {}, "relu");
  b.Node("GlobalAveragePool", {"r"}, {"avg"}, {}, "gap");
  b.Node("GlobalMaxPool", {"r"}, {"max"}, {}, "gmp");
  b.Output("avg").Output("max");
  return b;
}

}  // namespace

TEST_CASE("the split of a channels-last global pool gives every run about 128 positions",
          "[lowering]") {
  CHECK(codegen::ChannelsLastPoolSplits(1, 96, 160 * 160) == 200);
  CHECK(codegen::ChannelsLastPoolSplits(1, 96, 1023) == 1);  // below kPoolSplitMinPositions
  CHECK(codegen::ChannelsLastPoolSplits(2, 40, 1600) == 13);
  // At most kPoolSplitMaxBlocks blocks: 4 images x 12 runs of 32 channels leave 21 runs each.
  CHECK(codegen::ChannelsLastPoolSplits(4, 384, 1 << 20) == 1024 / 48);
}

TEST_CASE("a global pool over 1600 channels-last positions is a partial and a merge step",
          "[lowering]") {
  for (Precision p : {Precision::kFp16, Precision::kBf16}) {
    INFO(PrecisionName(p));
    auto planned = PlanAll(PoolsModel(40), p);  // one step per kernel: no launches merged
    const Plan& plan = planned.graph.plan;
    for (const char* pool : {"gap", "gmp"}) {
      INFO(pool);
      const auto steps = StepsOf(plan, pool);
      REQUIRE(steps.size() == 2);
      REQUIRE(steps[0]->launch.op.has_value());
      REQUIRE(steps[1]->launch.op.has_value());
      const auto& partial = *steps[0]->launch.op;
      const auto& merge = *steps[1]->launch.op;
      CHECK(partial.op_type == codegen::kPoolPartialOp);
      CHECK(partial.input_layout == codegen::Layout::kNhwc);
      CHECK(codegen::IntAttr(partial, "splits", 0) == 13);
      CHECK(codegen::IntAttr(partial, "max", -1) == (std::string(pool) == "gmp"));
      CHECK(merge.op_type == codegen::kPoolMergeOp);
      CHECK(codegen::IntAttr(merge, "count", 0) == 1600);
      // The runs' partials: a float arena buffer [2, 13, 40] between the two steps.
      const int runs = steps[0]->launch.outputs[0];
      CHECK(steps[1]->launch.inputs[0] == runs);
      CHECK(plan.buffers[runs].dtype == onnx::TensorProto::FLOAT);
      CHECK(plan.buffers[runs].dims == std::vector<int64_t>{2, 13, 40});
    }
  }
}

TEST_CASE("global pools over few positions or NCHW input stay one step", "[lowering]") {
  // 31 x 31 = 961 positions: below kPoolSplitMinPositions at fp16; fp32 pools read NCHW.
  for (auto [side, p] : {std::pair{31, Precision::kFp16}, std::pair{40, Precision::kFp32}}) {
    INFO(side << " " << PrecisionName(p));
    auto planned = PlanAll(PoolsModel(side), p);
    for (const char* pool : {"gap", "gmp"}) {
      const auto steps = StepsOf(planned.graph.plan, pool);
      REQUIRE(steps.size() == 1);
      REQUIRE(steps[0]->launch.op.has_value());
      CHECK(steps[0]->launch.op->op_type != codegen::kPoolPartialOp);
    }
  }
}
