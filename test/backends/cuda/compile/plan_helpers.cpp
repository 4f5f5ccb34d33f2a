// Planning helpers for the CUDA compile tests.
#include "plan_helpers.h"

#include <catch2/catch.hpp>

namespace ortc::test::cuda {

Planned PlanAll(const ModelBuilder& builder, backends::cuda::Precision precision,
                backends::cuda::CudaOptions::Attention attention) {
  auto options = backends::cuda::ParseCudaOptions({});
  REQUIRE(options.ok());
  options->precision = precision;
  options->attention = attention;
  // One step per kernel: these tests look at lowering's decisions step by step; merging
  // independent launches afterwards has tests of its own (launch_merging_test.cpp).
  options->merge_launches = false;
  return PlanWith(builder, *options);
}

Planned PlanWith(const ModelBuilder& builder, const backends::cuda::CudaOptions& options) {
  TempDir dir;
  builder.Save(dir / "m.onnx");
  auto m = graph::LoadModelFromFile(dir / "m.onnx");
  REQUIRE(m.ok());
  Planned p;
  p.model = std::move(m).value();
  const auto& g = p.model->graph;
  backends::Subgraph sg{"g", {}, g.inputs, g.outputs};
  for (size_t i = 0; i < g.nodes.size(); ++i) sg.nodes.push_back(static_cast<int>(i));
  auto planned = backends::cuda::PlanCudaSubgraph(*p.model, sg, options);
  INFO(planned.status().ToString());
  REQUIRE(planned.ok());
  p.graph = std::move(planned).value();
  return p;
}

int StepsWithSource(const backends::cuda::Plan& plan, const std::string& node) {
  int n = 0;
  for (const auto& s : plan.steps) {
    for (const auto& src : s.sources) n += src == node;
  }
  return n;
}

std::vector<const backends::cuda::PlanStep*> StepsOf(const backends::cuda::Plan& plan,
                                                     const std::string& node) {
  std::vector<const backends::cuda::PlanStep*> out;
  for (const auto& s : plan.steps)
    if (!s.sources.empty() && s.sources[0] == node) out.push_back(&s);
  return out;
}

}  // namespace ortc::test::cuda
