// The elementwise steps a fused op (FusedConv) applies to its result, in order: the compiler
// folds a Conv's chain of sole readers of these kinds into the Conv (attributes "activations",
// one name per step, and "activation_params", two floats per step), so the result is written
// once instead of being read and rewritten by each separate elementwise op.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cpu_kernel/exec_graph.h"

namespace ortc::exec {

struct FusedStep {
  enum class Kind {
    kRelu,
    kLeakyRelu,  // alpha: slope
    kClip,       // [alpha, beta]
    kSigmoid,
    kHardSigmoid,  // clip(alpha * x + beta, 0, 1)
    kHardSwish,
    kTanh,
    kLinear  // alpha * x + beta (a scalar Mul / Add / Sub / Div)
  };
  Kind kind = Kind::kRelu;
  float alpha = 0.f, beta = 0.f;
};

struct FusedActivation {
  std::vector<FusedStep> steps;
};

// Reads the op's "activations" / "activation_params"; fails on an unknown name.
Result<FusedActivation> ReadFusedActivation(const ExecOp& op);

// y[i] = steps(y[i]) for n floats, computed in float as the separate ONNX ops would.
void ApplyFusedActivation(const FusedActivation& act, float* y, int64_t n);

}  // namespace ortc::exec
