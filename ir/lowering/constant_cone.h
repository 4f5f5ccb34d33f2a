// Evaluating one value from the weights it is computed from, without folding the whole program:
// a pass that wants one large constant (a 4-bit weight's dequantization, past what FoldConstants
// keeps) gets it alone, with the cone's intermediate results freed as soon as nothing in the
// cone reads them, so a model's weights are never all expanded in memory at once.
#pragma once

#include <cstdint>
#include <optional>

#include "lowering/constant_folding.h"

namespace ortc::lowering {

struct ConeLimits {
  // More ops than this and the value is not weight preprocessing (a dequantization is a dozen).
  size_t max_ops = 64;
  // No single result of the cone may be larger; checked before its memory is allocated.
  int64_t max_bytes = kMaxFoldBytes;
};

// Value v computed on the host from the weights of `ir` through plain ops (ai.onnx, no
// subgraphs), or nullopt when v depends on anything else, needs an op the host evaluator
// declines, or exceeds `limits`. The IR is not changed.
std::optional<HostTensor> EvaluateConstantCone(const SubgraphIr& ir, int v,
                                               const ConeLimits& limits);

}  // namespace ortc::lowering
