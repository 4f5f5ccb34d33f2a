// Forms groups on a labelled DAG: maximal, connected, and with an acyclic quotient graph
// (so every group is convex: no path leaves a group and comes back). Independent of ONNX so it
// can be property-tested on random graphs.
#pragma once

#include <cstdint>
#include <vector>

namespace ortc::partition {

// The work FormGroups did, counted rather than timed so tests can bound its complexity.
struct GroupFormingStats {
  int64_t passes = 0;          // scans over the edges still worth trying
  int64_t merge_tests = 0;     // merges that needed a path search
  int64_t search_steps = 0;    // edge-list entries and groups the path searches examined
  int64_t groups_moved = 0;    // groups moved in the topological order after a merge
  int64_t relabel_writes = 0;  // order labels rewritten to make room for moved groups
  int64_t entries_moved = 0;   // edge-list entries copied when merging two groups' lists

  int64_t Work() const { return search_steps + groups_moved + relabel_writes + entries_moved; }
};

// `successors[v]` lists the nodes fed by v; node ids are a topological order (u -> v implies
// u < v). `labels[v]` is the backend chosen for v. Returns a group id per node: ids are dense,
// numbered in a topological order of the groups.
//
// Guarantees: nodes of a group share a label and are connected (ignoring edge direction);
// contracting all groups leaves a DAG; no two groups of the same label joined by an edge can
// be merged without creating a cycle (local maximality: the result cannot be made coarser by
// merging any adjacent pair). Deterministic for the same input.
//
// The groups are those of a greedy scan: every same-label edge in order (u ascending, then
// successors[u] in order) merges its two groups unless that would close a cycle, and the scan
// repeats over the refused edges while some merge happened. `stats`, when given, receives the
// work done.
std::vector<int> FormGroups(const std::vector<std::vector<int>>& successors,
                            const std::vector<int>& labels, GroupFormingStats* stats = nullptr);

}  // namespace ortc::partition
