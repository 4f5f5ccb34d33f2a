// MatMuls whose contraction has length 1 run as the Mul they compute: a one-hot column times a
// new cache row (GroupQueryAttention's expansion at a decode step) fuses with the Where and Add
// around it into one kernel, no GEMM (the Where and the product are two roots of one
// elementwise DAG, merged at the Add); contractions longer than 1 stay MatMuls.
#include <catch2/catch.hpp>

#include "plan_helpers.h"
#include "test_data.h"

namespace ortc::test::cuda {
namespace {

using backends::cuda::Plan;
using backends::cuda::StepKind;

int StepsOf(const Plan& plan, StepKind kind) {
  int n = 0;
  for (const auto& s : plan.steps) n += s.kind == kind;
  return n;
}

// present = Where(keep, past, 0) + one_hot [1, 2, L, 1] @ fresh [1, 2, 1, H] (or [.., K, H]).
ModelBuilder CacheUpdate(int64_t rows, int64_t contraction, int64_t head = 8) {
  ModelBuilder b(17);
  b.Input("past", {1, 2, rows, head}).Input("keep", {1, 1, rows, 1}, onnx::TensorProto::BOOL);
  b.Input("one_hot", {1, 1, rows, contraction}).Input("fresh", {1, 2, contraction, head});
  b.Initializer("zero", {}, {0.f});
  b.Node("Where", {"keep", "past", "zero"}, {"kept"});
  b.Node("MatMul", {"one_hot", "fresh"}, {"placed"});
  b.Node("Add", {"kept", "placed"}, {"present"}).Output("present");
  return b;
}

}  // namespace

TEST_CASE("a MatMul contracting one element is a Mul the elementwise fusion takes", "[lowering]") {
  auto p = PlanAll(CacheUpdate(64, 1));
  CHECK(p.graph.stats.at("outer_products") == 1);
  CHECK(StepsOf(p.graph.plan, StepKind::kGemm) == 0);
  CHECK(p.graph.plan.steps.size() == 1);  // Where, Mul and Add in one kernel
}

TEST_CASE("the two roots merge even when one reads a value computed after the other",
          "[lowering]") {
  // As in a decode step: the kept rows come first, the new row (here a Softmax's output) later;
  // nothing outside reads the kept rows, so they join the kernel of the Add.
  ModelBuilder b(17);
  b.Input("past", {1, 2, 64, 8}).Input("keep", {1, 1, 64, 1}, onnx::TensorProto::BOOL);
  b.Input("one_hot", {1, 1, 64, 1}).Input("raw", {1, 2, 1, 8});
  b.Initializer("zero", {}, {0.f});
  b.Node("Where", {"keep", "past", "zero"}, {"kept"});
  b.Node("Softmax", {"raw"}, {"fresh"}, {Attr("axis", int64_t{-1})});
  b.Node("MatMul", {"one_hot", "fresh"}, {"placed"});
  b.Node("Add", {"kept", "placed"}, {"present"}).Output("present");
  auto p = PlanAll(b);
  CHECK(p.graph.stats.at("outer_products") == 1);
  CHECK(p.graph.plan.steps.size() == 2);  // the Softmax, then Where, Mul and Add
}

TEST_CASE("MatMuls contracting more than one element stay GEMMs", "[lowering]") {
  auto two = PlanAll(CacheUpdate(64, 2));
  CHECK(two.graph.stats.at("outer_products") == 0);
  CHECK(StepsOf(two.graph.plan, StepKind::kGemm) == 1);
}

}  // namespace ortc::test::cuda
