// --last-token-logits: an output keeps only its last position (the row before its last axis),
// and the slice moves up the graph past every op that computes each position's row from that
// row alone, so that a decoder's LM head runs on one position instead of every prompt token.
// Generation reads only the last position's logits; a 64-token prefill of a decoder at
// Phi-3-mini's widths spent a quarter of its time in the LM head over all positions.
#pragma once

#include <string>

#include "graph/model.h"
#include "ortc/status.h"

namespace ortc::graph {

// Rewrites model->proto so that output `name` ([..., S, N]) becomes [..., 1, N], the S-th row:
// a Slice of the last position is inserted where the chain of ops computing the output row by
// row (MatMul by a 2-D weight, elementwise ops with operands broadcast along the rows, Softmax
// over the last axis) starts, or where it reads a value others read in full (they keep every
// row); at the output itself when no such op produces it. Needs shapes inferred (ranks). The caller
// rebuilds the graph and infers shapes again. Fails when the model has no output `name` or it has
// fewer than two axes.
Status KeepLastPosition(Model* model, const std::string& name);

}  // namespace ortc::graph
