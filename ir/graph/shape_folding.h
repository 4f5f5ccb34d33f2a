// Graph-level folding of shape computations: Shape/Size of statically shaped values and the
// small arithmetic chains on them become initializers, so later inference sees static shapes.
#pragma once

#include <cstdint>

#include <optional>

#include "graph/host_eval.h"
#include "graph/model.h"

namespace ortc::graph {

// Results larger than this stay nodes: folding is for shape vectors, not for weights.
inline constexpr int64_t kMaxShapeFoldBytes = 64 << 10;

// An embedded initializer of a type the host evaluator reads, as a HostTensor; nullopt for
// external data, other types, bytes that do not match the dims, or more than `max_bytes`.
std::optional<HostTensor> ReadSmall(const Initializer& init, int64_t max_bytes);

// One round over the graph in topological order. Replaces each node it can evaluate (see
// host_eval.h) with initializers for its outputs that remaining nodes still read, and drops
// initializers only the folded nodes read. Nodes writing a graph output, nodes with subgraphs
// and initializers that are also graph inputs (overridable) are left alone. Edits
// model->proto only, appends the removed nodes to model->folded_nodes and returns how many
// it removed: when > 0 the caller must rebuild
// model->graph from the proto and infer shapes again.
int FoldShapeComputationsOnce(Model* model, int64_t max_bytes = kMaxShapeFoldBytes);

}  // namespace ortc::graph
