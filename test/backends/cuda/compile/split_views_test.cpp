// A Split that only elementwise groups read costs no kernel: SwiGLU's gate and up projections,
// merged into one GEMM, are read in place by the silu(gate) * up kernel; a Split output that
// another kind of op reads keeps the Split, unless the parts are contiguous ranges of the
// input (one row, as in a decode step): then they are views any op reads.
#include <catch2/catch.hpp>

#include "plan_helpers.h"
#include "test_data.h"

namespace ortc::test::cuda {
namespace {

using backends::cuda::Plan;
using backends::cuda::StepKind;

ModelBuilder SwiGlu(bool softmax_reads_up, int64_t rows = 4) {
  ModelBuilder b(17);
  b.Input("x", {rows, 8});
  b.Initializer("wg", {8, 16}, RandomFloats(1, 128))
      .Initializer("wu", {8, 16}, RandomFloats(2, 128));
  b.Node("MatMul", {"x", "wg"}, {"gate"}).Node("MatMul", {"x", "wu"}, {"up"});
  b.Node("Sigmoid", {"gate"}, {"sg"}).Node("Mul", {"gate", "sg"}, {"silu"});
  b.Node("Mul", {"silu", "up"}, {"y"}).Output("y");
  if (softmax_reads_up) b.Node("Softmax", {"up"}, {"p"}, {Attr("axis", int64_t{-1})}).Output("p");
  return b;
}

}  // namespace

TEST_CASE("SwiGLU reads the merged projection's halves in place", "[lowering]") {
  auto p = PlanAll(SwiGlu(false));
  const Plan& plan = p.graph.plan;
  CHECK(p.graph.stats.at("projections_merged") == 1);
  CHECK(p.graph.stats.at("splits_read_in_place") == 1);
  REQUIRE(plan.steps.size() == 2);  // the merged GEMM, then one kernel
  CHECK(plan.steps[0].kind == StepKind::kGemm);
  REQUIRE(plan.steps[1].launch.fused);
  const auto& g = *plan.steps[1].launch.fused;
  REQUIRE(g.input_views.size() == 2);
  REQUIRE((g.input_views[0] && g.input_views[1]));
  // Both halves of the [4, 32] GEMM output: rows 32 apart, the up half 16 elements in.
  CHECK(g.input_views[0]->strides == std::vector<int64_t>{32, 1});
  CHECK(g.input_views[0]->offset + g.input_views[1]->offset == 16);
  CHECK(plan.steps[1].launch.inputs[0] == plan.steps[1].launch.inputs[1]);
  CHECK(plan.steps[1].launch.inputs[0] == plan.steps[0].gemm.y);
}

TEST_CASE("a Split output another kind of op reads keeps the Split kernel", "[lowering]") {
  auto p = PlanAll(SwiGlu(true));
  CHECK(p.graph.stats.count("splits_read_in_place") == 0);
  int splits = 0;
  for (const auto& s : p.graph.plan.steps)
    splits += s.kind == StepKind::kLaunch && s.launch.op && s.launch.op->op_type == "Split";
  CHECK(splits == 1);
}

TEST_CASE("the parts of one row's merged projection are views any op reads", "[lowering]") {
  auto p = PlanAll(SwiGlu(true, 1));
  const Plan& plan = p.graph.plan;
  CHECK(p.graph.stats.at("splits_as_views") == 1);
  CHECK(p.graph.stats.count("splits_read_in_place") == 0);
  int softmax = -1;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const auto& s = plan.steps[i];
    CHECK_FALSE((s.kind == StepKind::kLaunch && s.launch.op && s.launch.op->op_type == "Split"));
    if (s.kind == StepKind::kLaunch && s.launch.op && s.launch.op->op_type == "Softmax")
      softmax = static_cast<int>(i);
  }
  REQUIRE(softmax >= 0);
  // Softmax reads up: the [1, 32] GEMM output 16 floats in.
  const auto& up = plan.buffers[plan.steps[softmax].launch.inputs[0]];
  CHECK(up.kind == backends::cuda::fb::BufferKind::Alias);
  CHECK(up.alias_of == plan.steps[0].gemm.y);
  CHECK(up.offset == 16 * sizeof(float));
}

}  // namespace ortc::test::cuda
