// Common subexpression elimination over a SubgraphIr: exporters write the same computation
// once per layer (the attention mask's Where, a position table's Gather); it is kept once.
#pragma once

#include "lowering/subgraph_ir.h"

namespace ortc::lowering {

// First makes constants of up to 1 MiB with the same type, shape and bytes one value (exporters
// give each layer its own copy of a 0 or -inf, or of a position range as long as the context),
// then replaces each op that has the same type,
// domain, version, inputs and attributes as an earlier live op by that op's outputs. Ops with
// subgraphs and random ops are never merged; program outputs stay where they are. Returns how
// many ops were removed. A Cast to the type it reads is replaced by its input too.
int EliminateCommonSubexpressions(SubgraphIr* ir);

}  // namespace ortc::lowering
