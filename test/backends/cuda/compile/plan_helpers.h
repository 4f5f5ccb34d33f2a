// Shared helpers of the CUDA compile tests: plan a whole small model as one CUDA graph.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cuda/compile/compile.h"
#include "graph/model.h"
#include "model_builder.h"

namespace ortc::test::cuda {

struct Planned {
  std::unique_ptr<graph::Model> model;
  backends::cuda::PlannedGraph graph;
};

// Saves the model, loads it (shape inference included) and plans all its nodes as one group,
// one step per kernel (merge_launches off).
Planned PlanAll(const ModelBuilder& builder,
                backends::cuda::Precision precision = backends::cuda::Precision::kFp32,
                backends::cuda::CudaOptions::Attention attention =
                    backends::cuda::CudaOptions::Attention::kGemm);

// The same with every CUDA option given (ParseCudaOptions({}) plus the fields set).
Planned PlanWith(const ModelBuilder& builder, const backends::cuda::CudaOptions& options);

// Steps of the plan whose `sources` name the node.
int StepsWithSource(const backends::cuda::Plan& plan, const std::string& node);

// The steps whose first source is the node (what lowering made of it), in plan order.
std::vector<const backends::cuda::PlanStep*> StepsOf(const backends::cuda::Plan& plan,
                                                     const std::string& node);

}  // namespace ortc::test::cuda
