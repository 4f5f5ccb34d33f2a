// Resolving If nodes whose condition is known at compile time: the taken branch replaces the
// node in the main graph, so shape inference sees through it and accelerator backends can claim
// its contents. The condition becomes known through folding, e.g. from an input fixed with
// --input-value (a voice-activity model choosing its 8 kHz or 16 kHz branch from the sample rate).
#pragma once

#include "graph/model.h"

namespace ortc::graph {

// One pass over the main graph's If nodes whose condition is a constant initializer (not an
// overridable graph input). Edits model->proto only and records each resolved node in
// model->folded_nodes; returns how many it resolved: when > 0 the caller rebuilds the graph and
// infers shapes again. Fails only on a malformed branch (outputs not matching the node's).
Result<int> InlineConstantIfsOnce(Model* model);

}  // namespace ortc::graph
