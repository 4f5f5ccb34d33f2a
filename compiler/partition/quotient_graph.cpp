// Why the merge test is cheap:
//
// - Only one direction needs testing. The quotient is always a DAG (the input is one; a merge
//   of a -> b happens only when no other path leads from a to b, and contracting such an edge
//   keeps a DAG), so with the edge a -> b there is never a path from b back to a.
//
// - Each group keeps the far ends of its edges (node ids, mapped to groups by Find when read),
//   so a search never walks over a group's members. Merging appends the shorter lists to the
//   longer (small to large); edges that a merge made internal, and repeated edges to one
//   group, are dropped when a search meets them, so a grown group's lists hold only edges to
//   distinct other groups and stale entries are read once.
//
// - A topological order of the groups bounds the search: a group ordered after b cannot reach
//   b, and one ordered before a cannot be reached from a. Node ids cannot serve as that order:
//   groups are not intervals of ids ({1, 4} fed by {3} and feeding {2} is a path from the
//   group {3} to the group {2}). So the order is maintained: see Reorder.
//
// - The search runs from both ends at once, one list entry at a time: forward from a over
//   groups ordered before b, backward from b over groups ordered after a. It stops when either
//   side finds the other end or a group the other side reached (a path: refuse), or runs out
//   of groups (no path: merge). Merging a -> b in a chain, or a node into a wide fan-out or
//   fan-in, then costs the small side, not the group's whole boundary.
#include "partition/quotient_graph.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace ortc::partition {

QuotientGraph::QuotientGraph(const std::vector<std::vector<int>>& successors,
                             GroupFormingStats* stats)
    : parent_(successors.size()),
      size_(successors.size(), 1),
      out_(successors),
      in_(successors.size()),
      order_(static_cast<int>(successors.size())),  // node ids are a topological order
      fwd_(true, &out_, static_cast<int>(successors.size())),
      bwd_(false, &in_, static_cast<int>(successors.size())),
      stats_(stats) {
  std::iota(parent_.begin(), parent_.end(), 0);
  for (size_t u = 0; u < successors.size(); ++u) {
    for (int v : successors[u]) in_[v].push_back(static_cast<int>(u));
  }
}

void QuotientGraph::Side::Start(int group) {
  queue.assign(1, group);
  head = 0;
  this->group = -1;
}

int QuotientGraph::Find(int v) {
  while (parent_[v] != v) {
    parent_[v] = parent_[parent_[v]];
    v = parent_[v];
  }
  return v;
}

QuotientGraph::Step QuotientGraph::Advance(Side& side, const Side& other, int a, int b) {
  if (stats_) ++stats_->search_steps;
  if (side.group < 0) {
    if (side.head == side.queue.size()) return Step::kExhausted;
    side.group = side.queue[side.head++];
    side.index = 0;
    side.list_stamp = ++stamp_;
    return Step::kGoing;
  }
  std::vector<int>& list = (*side.lists)[side.group];
  if (side.index == list.size()) {
    side.group = -1;
    return Step::kGoing;
  }
  const int g = Find(list[side.index]);
  if (g == side.group || side.listed[g] == side.list_stamp) {
    // Inside the group since some merge, or a second edge to a group already met in this
    // list: drop it for good (order within a list does not matter). The last entry moves
    // here and is read next.
    list[side.index] = list.back();
    list.pop_back();
    return Step::kGoing;
  }
  side.listed[g] = side.list_stamp;
  ++side.index;
  const int from = side.forward ? a : b, to = side.forward ? b : a;
  if (side.group == from && g == to) return Step::kGoing;  // the edge a -> b itself
  if (g == to) {  // side.group, reached from one end, leads to the other
    found_ = side.group;
    return Step::kFound;
  }
  if (other.seen[g] == search_) {  // both ends reach g
    found_ = g;
    return Step::kFound;
  }
  const bool between = side.forward ? order_.Before(g, b) : order_.Before(a, g);
  if (!between || side.seen[g] == search_) return Step::kGoing;
  side.seen[g] = search_;
  side.queue.push_back(g);
  return Step::kGoing;
}

// The exhausted side reached a set S of groups ordered between a and b: forward, all that a
// reaches there (so S is closed under successors ordered before b), and b is not among them.
// S moves, in its own order, to right after b, and the merged group takes b's place; every
// edge still points forward in the order:
// - into S from outside: the source stays where it was, before its target's old place;
// - out of S to outside: the target is ordered after b (one before b would be in S);
// - into b: the source is not in S (else a path a -> S -> b), so it stays before b's place;
// - out of a: the target is in S (moved after b) or was after b already.
// Backward is the mirror image: S (all that reaches b from after a) moves to right before a,
// and the merged group takes a's place. Only S moves, so a merge costs the side of its search
// that ran out first.
void QuotientGraph::Reorder(const Side& exhausted, int a, int b, int root) {
  // The queue starts with a or b itself.
  std::vector<int> moved(exhausted.queue.begin() + 1, exhausted.queue.end());
  std::sort(moved.begin(), moved.end(), [&](int x, int y) { return order_.Before(x, y); });
  if (stats_) stats_->groups_moved += static_cast<int64_t>(moved.size());
  const int keep = exhausted.forward ? b : a;
  if (exhausted.forward) {
    int anchor = b;
    for (int g : moved) {
      order_.Remove(g);
      order_.InsertAfter(g, anchor);
      anchor = g;
    }
  } else {
    for (int g : moved) {
      order_.Remove(g);
      order_.InsertBefore(g, a);
    }
  }
  order_.Remove(keep == a ? b : a);
  if (root != keep) order_.Replace(keep, root);
  if (stats_) stats_->relabel_writes = order_.relabel_writes();
}

void QuotientGraph::MergeLists(std::vector<int>& into, std::vector<int>& from) {
  if (into.size() < from.size()) std::swap(into, from);
  if (stats_) stats_->entries_moved += static_cast<int64_t>(from.size());
  into.insert(into.end(), from.begin(), from.end());
  std::vector<int>().swap(from);
}

bool QuotientGraph::TryMerge(int u, int v, int* witness) {
  const int a = Find(u), b = Find(v);
  if (a == b) return false;
  if (stats_) ++stats_->merge_tests;
  search_ = ++stamp_;
  // Breadth first: a path that closes a cycle is most often short (a -> c -> b), and found
  // sooner so.
  fwd_.Start(a);
  bwd_.Start(b);
  const Side* done = nullptr;
  Step step = Step::kGoing;
  while (!done) {
    if ((step = Advance(fwd_, bwd_, a, b)) != Step::kGoing) {
      done = &fwd_;
    } else if ((step = Advance(bwd_, fwd_, a, b)) != Step::kGoing) {
      done = &bwd_;
    }
  }
  if (step == Step::kFound) {
    *witness = found_;
    return false;
  }

  const int root = size_[a] >= size_[b] ? a : b, child = root == a ? b : a;
  Reorder(*done, a, b, root);
  parent_[child] = root;
  size_[root] += size_[child];
  MergeLists(out_[root], out_[child]);
  MergeLists(in_[root], in_[child]);
  return true;
}

}  // namespace ortc::partition
