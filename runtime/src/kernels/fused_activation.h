// The activation a fused op (FusedConv) applies to its result: the compiler folds a Conv's sole
// reader of these kinds into the Conv (attributes "activation" and "activation_params"), so the
// result is written once instead of read and written again by a separate elementwise op.
#pragma once

#include <cstdint>
#include <string>

#include "exec/exec_graph.h"

namespace ortc::exec {

struct FusedActivation {
  enum class Kind { kNone, kRelu, kLeakyRelu, kClip, kSigmoid, kHardSigmoid, kHardSwish, kTanh };
  Kind kind = Kind::kNone;
  float alpha = 0.f, beta = 0.f;  // LeakyRelu: alpha; Clip: [alpha, beta]; HardSigmoid: a*x+b
};

// Reads the op's "activation" / "activation_params" attributes; fails on an unknown name.
Result<FusedActivation> ReadFusedActivation(const ExecOp& op);

// y[i] = act(y[i]) for n floats, computed in float as the separate ONNX op would.
void ApplyFusedActivation(const FusedActivation& act, float* y, int64_t n);

}  // namespace ortc::exec
