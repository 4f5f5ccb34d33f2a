// CastLike(x, like) is Cast(x, to = like's element type). PyTorch's dynamo exporter writes it
// wherever torchlib matches a constant to a tensor's type (SDPA's scale and causal mask,
// masked_fill's value...): once shape inference knows the type, the loader writes the Cast, so
// a constant x folds like any Cast and every backend that runs Cast runs it.
#pragma once

#include "graph/model.h"

namespace ortc::graph {

// Rewrites, in m->proto's main graph, each CastLike whose target type m->graph knows; returns
// how many. The caller rebuilds m->graph from the proto when it is not 0.
int RewriteCastLikes(Model* m);

}  // namespace ortc::graph
