// Constant folding: ops whose inputs are all known at compile time are evaluated on the host
// and replaced by weights. Covers the shape arithmetic exporters emit (Shape, Gather,
// Unsqueeze, Concat, Cast, Reshape...) and layout ops on weights (Transpose of a constant).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/host_eval.h"
#include "lowering/subgraph_ir.h"

namespace ortc::lowering {

using graph::HostTensor;

// Results larger than this stay ops: folding is for weight preprocessing and shape arithmetic,
// not for materialising what a kernel computes better at run time.
inline constexpr int64_t kMaxFoldBytes = 64ll << 20;

// Evaluates one op with graph::EvaluateHostOp; nullopt when the op, its types or its
// attributes are not covered, or its result would exceed `max_bytes` (the op then stays in the
// program). Never throws on odd inputs.
std::optional<std::vector<HostTensor>> EvaluateOp(const IrOp& op,
                                                  const std::vector<const HostTensor*>& inputs,
                                                  const std::vector<graph::TensorInfo>& input_infos,
                                                  int64_t max_bytes = kMaxFoldBytes);

struct FoldingStats {
  int folded_ops = 0;
};

// Folds every foldable op of `ir` whose outputs are not the subgraph's outputs. Results larger
// than `max_bytes` are left unfolded (they would bloat the binary).
Result<FoldingStats> FoldConstants(SubgraphIr* ir, int64_t max_bytes = kMaxFoldBytes);

}  // namespace ortc::lowering
