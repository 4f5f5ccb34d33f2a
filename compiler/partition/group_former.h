// Forms groups on a labelled DAG: maximal, connected, and with an acyclic quotient graph
// (so every group is convex: no path leaves a group and comes back). Independent of ONNX so it
// can be property-tested on random graphs.
#pragma once

#include <vector>

namespace ortc::partition {

// `successors[v]` lists the nodes fed by v; node ids are a topological order (u -> v implies
// u < v). `labels[v]` is the backend chosen for v. Returns a group id per node: ids are dense,
// numbered in a topological order of the groups.
//
// Guarantees: nodes of a group share a label and are connected (ignoring edge direction);
// contracting all groups leaves a DAG; no two groups of the same label joined by an edge can
// be merged without creating a cycle (local maximality: the result cannot be made coarser by
// merging any adjacent pair). Deterministic for the same input.
std::vector<int> FormGroups(const std::vector<std::vector<int>>& successors,
                            const std::vector<int>& labels);

}  // namespace ortc::partition
