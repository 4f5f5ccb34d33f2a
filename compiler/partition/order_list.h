// A total order on items 0..n-1 in which an item can be moved next to another and any two items
// compared in O(1): the "order maintenance" problem. group_former keeps a topological order of
// its contracted graph in one, to bound its path searches (a group after the target cannot
// reach it) while merges reorder groups.
//
// Each item carries an integer label that increases along the order. Moving an item takes the
// midpoint of the gap at its destination; when the gap is empty, the labels of the smallest
// enclosing aligned range that is sparse enough are spread evenly (Bender, Cole, Demaine,
// Farach-Colton, Zito, "Two simplified algorithms for maintaining order in a list", ESA 2002),
// which costs O(log n) label writes per move, amortized.
#pragma once

#include <cstdint>
#include <vector>

namespace ortc::partition {

class OrderList {
 public:
  // Items 0..n-1, in that order.
  explicit OrderList(int n);

  bool Before(int x, int y) const { return label_[x] < label_[y]; }

  // Takes `x` out of the order (it must be in it).
  void Remove(int x);
  // Puts `x` (not in the order) right after / right before `anchor` (in the order).
  void InsertAfter(int x, int anchor);
  void InsertBefore(int x, int anchor) { InsertAfter(x, prev_[anchor]); }
  // `x` (not in the order) takes the place of `old`, which leaves the order.
  void Replace(int old, int x);

  // Labels written by relabelling so far (the amortized cost above).
  int64_t relabel_writes() const { return relabel_writes_; }

 private:
  // Spreads the labels around `anchor` so that there is a free label right after it.
  void MakeRoomAfter(int anchor);
  uint64_t LabelAfter(int x) const;

  int head_;  // a sentinel before every item, label 0, never moved
  std::vector<uint64_t> label_;
  std::vector<int> prev_, next_;  // -1: none
  int64_t relabel_writes_ = 0;
};

}  // namespace ortc::partition
