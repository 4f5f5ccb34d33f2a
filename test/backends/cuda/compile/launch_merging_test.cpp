// Consecutive kernel steps that touch no common memory share one launch (launch_merging.h);
// a step that reads what another writes does not, nor does any step with merge_launches=off,
// and the memory plan keeps the merged parts' buffers apart.
#include <catch2/catch.hpp>

#include "plan_helpers.h"
#include "test_data.h"

namespace ortc::test::cuda {
namespace {

using backends::cuda::Plan;
using backends::cuda::StepKind;

std::vector<int64_t> Perm() {
  return {1, 0};
}

// a [16, 16] -> Exp -> x -> Transpose -> out1;  b [8, 8] -> Transpose -> y -> Sigmoid -> out2.
// In order: Exp, Transpose(x), Transpose(b), Sigmoid: the middle two are independent.
ModelBuilder TwoChains() {
  ModelBuilder b(17);
  b.Input("a", {16, 16}).Input("b", {8, 8});
  b.Node("Exp", {"a"}, {"x"}, {}, "exp");
  b.Node("Transpose", {"x"}, {"out1"}, {Attr("perm", Perm())}, "t_x").Output("out1");
  b.Node("Transpose", {"b"}, {"y"}, {Attr("perm", Perm())}, "t_b");
  b.Node("Sigmoid", {"y"}, {"out2"}, {}, "sigmoid").Output("out2");
  return b;
}

Planned PlanMerging(const ModelBuilder& b, bool merge) {
  auto options = backends::cuda::ParseCudaOptions(
      {{"merge_launches", merge ? std::string("on") : std::string("off")}});
  REQUIRE(options.ok());
  return PlanWith(b, *options);
}

bool Overlap(const backends::cuda::PlanBuffer& p, const backends::cuda::PlanBuffer& q) {
  return p.offset < q.offset + q.byte_size && q.offset < p.offset + p.byte_size;
}

const backends::cuda::PlanBuffer& Named(const Plan& plan, const std::string& name) {
  for (const auto& b : plan.buffers)
    if (b.name == name) return b;
  FAIL("no buffer " << name);
  return plan.buffers[0];
}

}  // namespace

TEST_CASE("independent neighbouring kernels share one launch", "[lowering]") {
  auto p = PlanMerging(TwoChains(), true);
  const Plan& plan = p.graph.plan;
  CHECK(p.graph.stats.at("launches_merged") == 1);
  REQUIRE(plan.steps.size() == 3);
  const auto& both = plan.steps[1];
  CHECK(both.kind == StepKind::kLaunch);
  CHECK(both.name == "t_x + t_b");
  CHECK(both.sources == std::vector<std::string>{"t_x", "t_b"});
  // Inputs of both parts, then outputs of both.
  REQUIRE(both.launch.inputs.size() == 2);
  REQUIRE(both.launch.outputs.size() == 2);
  CHECK(plan.buffers[both.launch.inputs[0]].name == "x");
  CHECK(plan.buffers[both.launch.inputs[1]].name == "b");
  CHECK(plan.buffers[both.launch.outputs[0]].name == "out1");
  CHECK(plan.buffers[both.launch.outputs[1]].name == "y");
  // The merged kernel is the one the step launches; its parts are gone from the plan.
  CHECK(plan.kernels.size() == 3);
  CHECK(std::find(plan.kernels.begin(), plan.kernels.end(), both.launch.kernel) !=
        plan.kernels.end());
  CHECK(p.graph.kernels.size() == 3);
  // x dies and y is born in the merged step: they may not share memory there.
  CHECK_FALSE(Overlap(Named(plan, "x"), Named(plan, "y")));
}

TEST_CASE("kernels launched one by one when merging is off or they depend", "[lowering]") {
  auto off = PlanMerging(TwoChains(), false);
  CHECK(off.graph.stats.at("launches_merged") == 0);
  CHECK(off.graph.plan.steps.size() == 4);
  // Launched one by one, x's memory is free once t_x has read it, and y may take it.
  CHECK(Overlap(Named(off.graph.plan, "x"), Named(off.graph.plan, "y")));
  // A chain: each kernel reads what the one before wrote.
  ModelBuilder b(17);
  b.Input("a", {16, 16});
  b.Node("Exp", {"a"}, {"x"}).Node("Transpose", {"x"}, {"t"}, {Attr("perm", Perm())});
  b.Node("Sigmoid", {"t"}, {"u"}).Node("Transpose", {"u"}, {"v"}, {Attr("perm", Perm())});
  b.Output("v");
  auto chain = PlanMerging(b, true);
  CHECK(chain.graph.stats.at("launches_merged") == 0);
  CHECK(chain.graph.plan.steps.size() == 4);
}

TEST_CASE("a kernel with shared memory keeps its own launch", "[lowering]") {
  // Softmax's row reduction uses shared memory and a barrier: it runs alone.
  ModelBuilder b(17);
  b.Input("a", {4, 32}).Input("c", {8, 8});
  b.Node("Softmax", {"a"}, {"p"}, {Attr("axis", int64_t{-1})}).Output("p");
  b.Node("Transpose", {"c"}, {"ct"}, {Attr("perm", Perm())}).Output("ct");
  auto p = PlanMerging(b, true);
  CHECK(p.graph.stats.at("launches_merged") == 0);
  CHECK(p.graph.plan.steps.size() == 2);
}

TEST_CASE("one merged launch takes at most 256 pointers", "[lowering]") {
  // 130 independent one-input, one-output kernels: 128 of them (256 pointers) share a launch,
  // the last two another.
  ModelBuilder b(17);
  for (int i = 0; i < 130; ++i) {
    const std::string n = std::to_string(i);
    b.Input("x" + n, {4}).Node("Neg", {"x" + n}, {"y" + n}).Output("y" + n);
  }
  auto p = PlanMerging(b, true);
  REQUIRE(p.graph.plan.steps.size() == 2);
  CHECK(p.graph.stats.at("launches_merged") == 128);
  CHECK(p.graph.plan.steps[0].launch.inputs.size() + p.graph.plan.steps[0].launch.outputs.size() ==
        256);
}

TEST_CASE("merge_launches is a validated cuda option, on unless turned off", "[lowering]") {
  auto d = backends::cuda::ParseCudaOptions({});
  REQUIRE(d.ok());
  CHECK(d->merge_launches);
  auto off = backends::cuda::ParseCudaOptions({{"merge_launches", "off"}});
  REQUIRE(off.ok());
  CHECK_FALSE(off->merge_launches);
  auto bad = backends::cuda::ParseCudaOptions({{"merge_launches", "yes"}});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("on, off"));
}

}  // namespace ortc::test::cuda
