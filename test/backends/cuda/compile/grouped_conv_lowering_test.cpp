// Which convolutions become generated GroupedConv kernels: depthwise and narrow groups by the
// static rule, wide groups and dense convolutions stay cuDNN calls, grouped_conv=library|generated
// override the rule; the kernel request carries the fused epilogue and the CRSK filter.
#include <catch2/catch.hpp>

#include "cuda/compile/lowering_grouped_conv.h"
#include "plan_helpers.h"
#include "test_data.h"

using namespace ortc::backends::cuda;
using ortc::test::Attr;
using ortc::test::ModelBuilder;
using ortc::test::cuda::PlanWith;

namespace {

// x [1, 16, 8, 8] -> Conv(groups, 3x3, pad 1) + bias -> Relu.
ModelBuilder GroupedConvModel(int64_t groups) {
  ModelBuilder b(13, 8);
  b.Input("x", {1, 16, 8, 8});
  const int64_t per_group = 16 / groups;
  b.Initializer("W", {16, per_group, 3, 3}, std::vector<float>(16 * per_group * 9, 0.1f));
  b.Initializer("B", {16}, std::vector<float>(16, 0.2f));
  b.Node("Conv", {"x", "W", "B"}, {"c"},
         {Attr("pads", std::vector<int64_t>{1, 1, 1, 1}), Attr("group", groups)}, "conv");
  b.Node("Relu", {"c"}, {"y"}, {}, "relu");
  b.Output("y");
  return b;
}

CudaOptions Options(Precision p, CudaOptions::GroupedConv choice) {
  auto o = ParseCudaOptions({});
  REQUIRE(o.ok());
  o->precision = p;
  o->grouped_conv = choice;
  return *o;
}

const PlanStep* StepOf(const Plan& plan, const std::string& source) {
  const auto steps = ortc::test::cuda::StepsOf(plan, source);
  return steps.empty() ? nullptr : steps.front();
}

}  // namespace

TEST_CASE("depthwise and narrow grouped convolutions lower to generated kernels", "[lowering]") {
  for (Precision p : {Precision::kFp32, Precision::kFp16}) {
    for (int64_t groups : {16, 2}) {  // 1 and 8 channels per group
      INFO(PrecisionName(p) << ", " << groups << " groups");
      auto planned =
          PlanWith(GroupedConvModel(groups), Options(p, CudaOptions::GroupedConv::kAuto));
      const PlanStep* s = StepOf(planned.graph.plan, "conv");
      REQUIRE(s != nullptr);
      REQUIRE(s->kind == StepKind::kLaunch);
      REQUIRE(s->launch.op.has_value());
      const auto& op = *s->launch.op;
      CHECK(op.op_type == "GroupedConv");
      CHECK(s->sources == std::vector<std::string>{"conv", "relu"});  // Relu in the epilogue
      CHECK(op.inputs[2].dtype != 0);                                 // the bias
      CHECK(op.inputs[3].dtype == 0);                                 // no residual
      CHECK(op.input_layout == (p == Precision::kFp16
                                    ? ortc::backends::cuda::codegen::Layout::kNhwc
                                    : ortc::backends::cuda::codegen::Layout::kNchw));
      const auto& filter = planned.graph.plan.buffers[s->launch.inputs[1]];
      CHECK(filter.name == "W.crsk");
      CHECK(planned.graph.plan.weights[filter.weight_slot].layout == "CRSK");
      CHECK(planned.graph.stats.at("generated_convs") == 1);
    }
  }
}

TEST_CASE("wide groups stay cuDNN calls, and grouped_conv= overrides the rule", "[lowering]") {
  // 16 channels per group: beyond kGeneratedConvMaxGroupChannels.
  static_assert(kGeneratedConvMaxGroupChannels < 16);
  auto wide =
      PlanWith(GroupedConvModel(1), Options(Precision::kFp16, CudaOptions::GroupedConv::kAuto));
  CHECK(StepOf(wide.graph.plan, "conv")->kind ==
        StepKind::kConv);  // a dense conv is never generated
  auto forced_library =
      PlanWith(GroupedConvModel(16), Options(Precision::kFp16, CudaOptions::GroupedConv::kLibrary));
  CHECK(StepOf(forced_library.graph.plan, "conv")->kind == StepKind::kConv);
  CHECK(forced_library.graph.stats.count("generated_convs") == 0);

  ModelBuilder b(13, 8);  // 2 groups of 16 channels
  b.Input("x", {1, 32, 8, 8});
  b.Initializer("W", {32, 16, 3, 3}, std::vector<float>(32 * 16 * 9, 0.1f));
  b.Node("Conv", {"x", "W"}, {"y"},
         {Attr("pads", std::vector<int64_t>{1, 1, 1, 1}), Attr("group", int64_t{2})}, "conv");
  b.Output("y");
  CHECK(StepOf(PlanWith(b, Options(Precision::kFp16, CudaOptions::GroupedConv::kAuto)).graph.plan,
               "conv")
            ->kind == StepKind::kConv);
  CHECK(StepOf(
            PlanWith(b, Options(Precision::kFp16, CudaOptions::GroupedConv::kGenerated)).graph.plan,
            "conv")
            ->kind == StepKind::kLaunch);
}

TEST_CASE("grouped_conv is a validated cuda option", "[lowering]") {
  auto o = ParseCudaOptions({{"grouped_conv", "generated"}});
  REQUIRE(o.ok());
  CHECK(o->grouped_conv == CudaOptions::GroupedConv::kGenerated);
  auto bad = ParseCudaOptions({{"grouped_conv", "fast"}});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("auto, library, generated"));
}
