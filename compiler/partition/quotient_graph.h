// The contracted graph that group_former merges on: groups of nodes (union-find), the edges
// between groups, and a topological order of the groups, with a merge test that refuses any
// merge that would close a cycle. The test costs about the part of the graph between the two
// groups, not the size of the groups or of everything reachable from them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "partition/group_former.h"
#include "partition/order_list.h"

namespace ortc::partition {

class QuotientGraph {
 public:
  // `successors` as in FormGroups (node ids a topological order). `stats` (optional) receives
  // the work done.
  QuotientGraph(const std::vector<std::vector<int>>& successors, GroupFormingStats* stats);

  // The group of node v, named by one of its nodes.
  int Find(int v);

  // Merges the groups of u and v (an edge u -> v, in different groups) unless another path
  // leads from u's group to v's through a third group: the merged group would then be on a
  // cycle. Returns whether they merged; when not, `*witness` is a node of a third group on
  // such a path. That path survives later merges (merging never removes a path), so the refusal
  // stands for as long as the witness's group is neither u's nor v's.
  bool TryMerge(int u, int v, int* witness);

 private:
  // One direction of the path search: an interruptible breadth-first scan of edge lists.
  struct Side {
    Side(bool forward, std::vector<std::vector<int>>* lists, int n)
        : forward(forward), lists(lists), seen(n, 0), listed(n, 0) {}
    void Start(int group);

    bool forward;  // along out_ from group a, or along in_ from group b
    std::vector<std::vector<int>>* lists;
    std::vector<uint64_t> seen;    // == search_: reached by this side in this search
    std::vector<uint64_t> listed;  // == list_stamp: met in the list being scanned
    std::vector<int> queue;        // reached, in order; lists scanned up to `head`
    int group = -1;                // whose list is being scanned; -1: none
    size_t index = 0;              // next entry of that list
    size_t head = 0;               // next group of `queue` to scan
    uint64_t list_stamp = 0;
  };
  enum class Step { kGoing, kExhausted, kFound };

  // Examines one entry of the list being scanned, or starts the next list.
  // kFound leaves a group on the path in `found_`.
  Step Advance(Side& side, const Side& other, int a, int b);
  // Moves the groups one exhausted side reached out of the way of the merged group, and gives
  // the merged group a's or b's place in the order.
  void Reorder(const Side& exhausted, int a, int b, int root);
  void MergeLists(std::vector<int>& into, std::vector<int>& from);

  std::vector<int> parent_;                 // union-find over nodes
  std::vector<int> size_;                   // members, for union by size
  std::vector<std::vector<int>> out_, in_;  // per group: the far ends of its edges (see .cpp)
  OrderList order_;                         // a topological order of the groups
  Side fwd_, bwd_;
  uint64_t stamp_ = 0;   // source of fresh stamps: no array needs clearing between searches
  uint64_t search_ = 0;  // the current search's stamp
  int found_ = -1;       // a group on the path the last search found
  GroupFormingStats* stats_;
};

}  // namespace ortc::partition
