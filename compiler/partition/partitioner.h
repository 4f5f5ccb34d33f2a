// Assigns every node to a backend and forms the groups each backend compiles.
//
// Backends are asked in the user's order; a node goes to the first that accepts it, and the
// CPU backend (always last) takes the rest. Nodes with subgraphs (If, Loop, Scan) are placed
// whole, like any node: a backend that accepts one runs its subgraphs itself; the in-tree
// accelerator tables do not accept them, so they run on the CPU. Groups are then formed by
// group_former.h (connected, convex, acyclic together, locally maximal).
#pragma once

#include <string>
#include <vector>

#include "backend.h"
#include "graph/graph.h"
#include "ortc/status.h"

namespace ortc::partition {

struct Group {
  const backends::Backend* backend = nullptr;
  int index = 0;                  // position among this backend's groups (execution order)
  std::vector<int> nodes;         // node ids, topological order
  std::vector<int> inputs;        // values read from outside the group (graph inputs included)
  std::vector<int> outputs;       // values used outside the group (graph outputs included)
  std::vector<int> initializers;  // initializer ids the group reads
  int64_t initializer_bytes = 0;

  std::string name() const;  // "cuda_0"
};

struct Refusal {
  int node;
  const backends::Backend* backend;
  std::string reason;
};

struct Partition {
  std::vector<const backends::Backend*> backends;  // in the order asked, CPU last
  std::vector<Group> groups;                       // execution order
  std::vector<int> group_of_node;                  // -1 for unplaced nodes
  std::vector<Refusal> refusals;                   // every "no" a backend gave
  std::vector<int> unplaced;                       // nodes that no backend accepts

  int CountGroups(const backends::Backend* b) const;
};

// `requested` lists backends in priority order; the CPU backend is appended when missing.
Partition PartitionGraph(const graph::Graph& g, std::vector<const backends::Backend*> requested);

// Fails when some node has no backend, or when a backend got more than `max_partitions`
// groups (0 = no limit). The message names the nodes or the counts and what to do.
Status CheckPartition(const graph::Graph& g, const Partition& p, int max_partitions);

}  // namespace ortc::partition
