// Order maintenance by relabelling (see order_list.h for the why and the reference).
#include "partition/order_list.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ortc::partition {
namespace {

// Labels live in [0, 2^62): the sparseness test below then admits about 4e9 items.
constexpr uint64_t kUniverse = uint64_t{1} << 62;
constexpr int kUniverseBits = 62;
// A range of 2^i labels may be spread when at most a T^-i fraction of its labels would be used
// (T in (1, 2); the paper's analysis): small ranges must be nearly empty, large ones may be
// fuller, so a relabel touches O(log n) items amortized.
constexpr double kDensityBase = 1.4;

}  // namespace

OrderList::OrderList(int n) : head_(n), label_(n + 1), prev_(n + 1), next_(n + 1) {
  const uint64_t step = kUniverse / (static_cast<uint64_t>(n) + 1);
  for (int i = 0; i <= n; ++i) {
    // The head sentinel (index n) comes first, then 0..n-1.
    const int pos = i == n ? 0 : i + 1;
    label_[i] = pos * step;
    prev_[i] = i == n ? -1 : (i == 0 ? head_ : i - 1);
    next_[i] = i == n ? (n > 0 ? 0 : -1) : (i + 1 < n ? i + 1 : -1);
  }
}

uint64_t OrderList::LabelAfter(int x) const {
  return next_[x] >= 0 ? label_[next_[x]] : kUniverse;
}

void OrderList::Remove(int x) {
  if (prev_[x] >= 0) next_[prev_[x]] = next_[x];
  if (next_[x] >= 0) prev_[next_[x]] = prev_[x];
  prev_[x] = next_[x] = -1;
}

void OrderList::InsertAfter(int x, int anchor) {
  if (LabelAfter(anchor) - label_[anchor] < 2) MakeRoomAfter(anchor);
  label_[x] = label_[anchor] + (LabelAfter(anchor) - label_[anchor]) / 2;
  prev_[x] = anchor;
  next_[x] = next_[anchor];
  if (next_[anchor] >= 0) prev_[next_[anchor]] = x;
  next_[anchor] = x;
}

void OrderList::Replace(int old, int x) {
  label_[x] = label_[old];
  prev_[x] = prev_[old];
  next_[x] = next_[old];
  if (prev_[x] >= 0) next_[prev_[x]] = x;
  if (next_[x] >= 0) prev_[next_[x]] = x;
  prev_[old] = next_[old] = -1;
}

void OrderList::MakeRoomAfter(int anchor) {
  // Grow an aligned range of labels around the anchor, counting the items in it, until it is
  // sparse enough; then give its items evenly spaced labels.
  int first = anchor, last = anchor;
  uint64_t count = 1;
  for (int bits = 1; bits <= kUniverseBits; ++bits) {
    const uint64_t size = uint64_t{1} << bits;
    const uint64_t base = label_[anchor] & ~(size - 1);
    while (prev_[first] >= 0 && label_[prev_[first]] >= base) {
      first = prev_[first];
      ++count;
    }
    while (next_[last] >= 0 && label_[next_[last]] - base < size) {
      last = next_[last];
      ++count;
    }
    // Room for one more item, with at least two labels per item so the new one finds a gap.
    const double needed =
        static_cast<double>(count + 1) * std::max(2.0, std::pow(kDensityBase, bits));
    if (needed > static_cast<double>(size)) continue;
    const uint64_t gap = size / (count + 1);
    uint64_t label = base;  // the head sentinel, when in the range, is first and keeps 0
    for (int x = first;; x = next_[x]) {
      label_[x] = label;
      label += gap;
      ++relabel_writes_;
      if (x == last) break;
    }
    return;
  }
  throw std::length_error("OrderList: too many items");
}

}  // namespace ortc::partition
