// Constant folding: ops whose inputs are all known at compile time are evaluated on the host
// and replaced by weights. Covers the shape arithmetic exporters emit (Shape, Gather,
// Unsqueeze, Concat, Cast, Reshape...) and layout ops on weights (Transpose of a constant).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/host_eval.h"
#include "lowering/subgraph_ir.h"

namespace ortc::lowering {

using graph::HostTensor;

// Results larger than this stay ops: folding is for weight preprocessing and shape arithmetic,
// not for materialising what a kernel computes better at run time...
inline constexpr int64_t kMaxFoldBytes = 64ll << 20;
// ...except a result no more than this many times the bytes of the weights it is computed from:
// weight preprocessing (a 4-bit weight's dequantization to float is 8x its packed bytes, a cast
// of fp16 weights 2x), which would otherwise run in every inference, however large the model.
// What generates data (ConstantOfShape, an Expand of a few values) stays bounded by the above,
// and so does moving a model weight's values as they are (a Transpose of the embedding for a
// tied LM head): kernels read such layouts in place, where a folded copy would store the weight
// twice.
inline constexpr int64_t kMaxFoldGrowth = 8;

// Transpose, Reshape, Gather, Concat...: ops whose result holds values of their first input (of
// every input for Concat) rearranged.
bool MovesValuesOnly(std::string_view op_type);

// The largest result folding takes from weights of `source_bytes` in all (each counted once);
// `moves_model_weight`: the op only moves the values of weights the model itself holds.
int64_t FoldLimit(int64_t source_bytes, bool moves_model_weight = false,
                  int64_t max_bytes = kMaxFoldBytes);

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
// than FoldLimit(bytes of the weights they come from, max_bytes) are left unfolded (they would
// bloat the binary). A folded value is held in memory only while an unfolded op may read it.
Result<FoldingStats> FoldConstants(SubgraphIr* ir, int64_t max_bytes = kMaxFoldBytes);

}  // namespace ortc::lowering
