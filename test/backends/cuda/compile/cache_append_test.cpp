// A decode step in the Hugging Face export form: each cache grows by the step's row inside the
// graph (`present = Concat(past, new)`, often behind an Identity), and the attention reads the
// grown cache. The present is written once, where the Concat computes it, and at fp16/bf16 a
// float cache stays float: no whole-cache cast in, no copy, no whole-cache cast out.
#include <catch2/catch.hpp>

#include <cmath>

#include "plan_helpers.h"
#include "test_data.h"

namespace ortc::test::cuda {
namespace {

using backends::cuda::Plan;
using backends::cuda::Precision;
using backends::cuda::StepKind;
using backends::cuda::fb::BufferKind;
using T = onnx::TensorProto;

// One step of a GQA decoder (4 query heads, 2 key/value heads of 8, a past of 7 rows): k and v
// rows projected from x, each appended to its past, the attention over the grown caches.
// `identity`: present_* are Identity copies of the Concats, as TorchScript writes them.
// `summed`: another op (a ReduceSum) also reads the grown key cache.
ModelBuilder DecodeStep(bool identity, bool summed = false) {
  ModelBuilder b(18);
  b.Input("x", {1, 1, 16}).Input("q", {1, 4, 1, 8});
  b.Input("past_key", {1, 2, 7, 8}).Input("past_value", {1, 2, 7, 8});
  b.IntInitializer("row", {1, 1, 2, 8}).IntInitializer("ax2", {2});
  b.IntInitializer("rep", {1, 2, 2, 8, 8}).IntInitializer("heads4", {1, 4, 8, 8});
  b.Initializer("scale", {}, {1 / std::sqrt(8.f)});
  for (const char* t : {"key", "value"}) {
    const std::string n = t;
    b.Initializer("w_" + n, {16, 16}, RandomFloats(n == "key" ? 11 : 12, 256));
    b.Node("MatMul", {"x", "w_" + n}, {n + "_proj"});
    b.Node("Reshape", {n + "_proj", "row"}, {n + "_row"});
    b.Node("Transpose", {n + "_row"}, {n + "_new"},
           {Attr("perm", std::vector<int64_t>{0, 2, 1, 3})});
    const std::string grown = identity ? n + "_cat" : "present_" + n;
    b.Node("Concat", {"past_" + n, n + "_new"}, {grown}, {Attr("axis", int64_t{2})}, n + "_append");
    if (identity) b.Node("Identity", {grown}, {"present_" + n}, {}, n + "_copy");
    b.Output("present_" + n);
    b.Node("Unsqueeze", {grown, "ax2"}, {n + "5"}).Node("Expand", {n + "5", "rep"}, {n + "e"});
    b.Node("Reshape", {n + "e", "heads4"}, {n + "r"});
  }
  b.Node("Transpose", {"keyr"}, {"kt"}, {Attr("perm", std::vector<int64_t>{0, 1, 3, 2})});
  b.Node("MatMul", {"q", "kt"}, {"qk"}).Node("Mul", {"qk", "scale"}, {"scores"});
  b.Node("Softmax", {"scores"}, {"p"}, {Attr("axis", int64_t{-1})}, "softmax");
  b.Node("MatMul", {"p", "valuer"}, {"y"}).Output("y");
  if (summed) {
    b.IntInitializer("last", {-1});
    b.Node("ReduceSum", {identity ? "key_cat" : "present_key", "last"}, {"key_sum"}, {}, "sum");
    b.Output("key_sum");
  }
  return b;
}

const backends::cuda::PlanStep* StepNamed(const Plan& plan, const std::string& name) {
  for (const auto& s : plan.steps)
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace

TEST_CASE("a graph output copied from a value is written where the value is computed",
          "[lowering]") {
  auto p = PlanAll(DecodeStep(true));
  const Plan& plan = p.graph.plan;
  CHECK(p.graph.stats.at("outputs_written_at_source") == 2);
  CHECK(StepsWithSource(plan, "key_copy") == 0);
  CHECK(StepsWithSource(plan, "value_copy") == 0);
  for (const char* n : {"key_append", "value_append"}) {
    const auto* s = StepNamed(plan, n);
    REQUIRE(s != nullptr);
    REQUIRE(s->launch.outputs.size() == 1);
    CHECK(plan.buffers[s->launch.outputs[0]].kind == BufferKind::Output);
  }
  // Without the Identity the plan is the same: the copy was all the difference.
  auto direct = PlanAll(DecodeStep(false));
  CHECK(direct.graph.stats.at("outputs_written_at_source") == 0);
  CHECK(direct.graph.plan.steps.size() == plan.steps.size());
}

TEST_CASE("at fp16 and bf16 a float cache stays float: the append converts the new row",
          "[lowering]") {
  for (auto precision : {Precision::kFp16, Precision::kBf16}) {
    const int32_t device = precision == Precision::kFp16 ? T::FLOAT16 : T::BFLOAT16;
    for (bool identity : {true, false}) {
      auto p = PlanAll(DecodeStep(identity), precision);
      const Plan& plan = p.graph.plan;
      INFO("identity " << identity);
      // No cast of a past in and none of a present out; the q input and y output keep theirs.
      for (const char* n : {"cast_in_past_key", "cast_in_past_value", "cast_out_present_key",
                            "cast_out_present_value"})
        CHECK(StepNamed(plan, n) == nullptr);
      CHECK(StepNamed(plan, "cast_in_q") != nullptr);
      for (const char* n : {"key_append", "value_append"}) {
        const auto* s = StepNamed(plan, n);
        REQUIRE(s != nullptr);
        REQUIRE(s->launch.op);
        const auto& op = *s->launch.op;
        REQUIRE(op.inputs.size() == 2);
        CHECK(op.inputs[0].dtype == T::FLOAT);  // the past as the caller gave it
        CHECK(op.inputs[1].dtype == device);    // the row computed at the device type
        CHECK(op.outputs[0].dtype == T::FLOAT);
        CHECK(plan.buffers[s->launch.inputs[0]].kind == BufferKind::Input);
        CHECK(plan.buffers[s->launch.outputs[0]].kind == BufferKind::Output);
      }
      // The decode attention loads each input in its own type: it reads the float caches.
      int attentions = 0;
      for (const auto& s : plan.steps) {
        if (s.kind != StepKind::kLaunch || !s.launch.op || s.launch.op->op_type != "FusedAttention")
          continue;
        ++attentions;
        CHECK(s.launch.op->inputs[0].dtype == device);
        CHECK(s.launch.op->inputs[1].dtype == T::FLOAT);
        CHECK(s.launch.op->inputs[2].dtype == T::FLOAT);
        CHECK(plan.buffers[s.launch.inputs[1]].kind == BufferKind::Output);
      }
      CHECK(attentions == 1);
    }
  }
}

TEST_CASE("an op that loads one type reads a narrowed copy of a float cache", "[lowering]") {
  auto p = PlanAll(DecodeStep(true, true), Precision::kFp16);
  const Plan& plan = p.graph.plan;
  const auto* cast = StepNamed(plan, "narrow_present_key");
  REQUIRE(cast != nullptr);
  const auto* sum = StepNamed(plan, "sum");
  REQUIRE(sum != nullptr);
  REQUIRE(cast->launch.outputs.size() == 1);
  CHECK(plan.buffers[cast->launch.outputs[0]].dtype == T::FLOAT16);
  CHECK(sum->launch.inputs[0] == cast->launch.outputs[0]);
  CHECK(StepNamed(plan, "narrow_present_value") == nullptr);  // only the attention reads it
}

TEST_CASE("a Concat of computed values keeps the device type", "[lowering]") {
  // Nothing a program input holds is copied: the output is computed, so it narrows as before.
  ModelBuilder b(18);
  b.Input("x", {2, 4});
  b.Node("Relu", {"x"}, {"r"}).Node("Sigmoid", {"x"}, {"s"});
  b.Node("Concat", {"r", "s"}, {"y"}, {Attr("axis", int64_t{0})}, "join").Output("y");
  auto p = PlanAll(b, Precision::kFp16);
  const auto* join = StepNamed(p.graph.plan, "join");
  REQUIRE(join != nullptr);
  REQUIRE(join->launch.op);
  CHECK(join->launch.op->outputs[0].dtype == T::FLOAT16);
  CHECK(StepNamed(p.graph.plan, "cast_out_y") != nullptr);
}

}  // namespace ortc::test::cuda
