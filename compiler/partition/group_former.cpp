// Greedy merging of same-label neighbours with a cycle check on the contracted graph,
// repeated until no merge succeeds (merging never removes a path, so a refused pair stays
// refused unless a third group on its path joins one of them: hence the repeat).
#include "partition/group_former.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <queue>

namespace ortc::partition {
namespace {

class Quotient {
 public:
  explicit Quotient(const std::vector<std::vector<int>>& succ)
      : succ_(succ), n_(static_cast<int>(succ.size())) {
    parent_.resize(n_);
    std::iota(parent_.begin(), parent_.end(), 0);
    members_.resize(n_);
    for (int i = 0; i < n_; ++i) members_[i] = {i};
    seen_.assign(n_, 0);
  }

  int Find(int v) {
    while (parent_[v] != v) {
      parent_[v] = parent_[parent_[v]];
      v = parent_[v];
    }
    return v;
  }

  // True when group `b` can be reached from group `a` through at least one other group.
  bool HasIndirectPath(int a, int b) {
    ++stamp_;
    std::vector<int> stack;
    auto push_successors = [&](int g) {
      for (int m : members_[g]) {
        for (int s : succ_[m]) {
          int sg = Find(s);
          if (sg == g || seen_[sg] == stamp_) continue;
          if (g == a && sg == b) continue;  // the direct edge itself
          seen_[sg] = stamp_;
          stack.push_back(sg);
        }
      }
    };
    push_successors(a);
    while (!stack.empty()) {
      int g = stack.back();
      stack.pop_back();
      if (g == b) return true;
      push_successors(g);
    }
    return false;
  }

  // Merges the groups of u and v (edge u -> v) if that keeps the quotient acyclic.
  bool TryMerge(int u, int v) {
    int a = Find(u), b = Find(v);
    if (a == b) return false;
    if (HasIndirectPath(a, b) || HasIndirectPath(b, a)) return false;
    if (members_[a].size() < members_[b].size()) std::swap(a, b);
    parent_[b] = a;
    members_[a].insert(members_[a].end(), members_[b].begin(), members_[b].end());
    members_[b].clear();
    return true;
  }

 private:
  const std::vector<std::vector<int>>& succ_;
  int n_;
  std::vector<int> parent_;
  std::vector<std::vector<int>> members_;
  std::vector<unsigned> seen_;
  unsigned stamp_ = 0;
};

}  // namespace

std::vector<int> FormGroups(const std::vector<std::vector<int>>& successors,
                            const std::vector<int>& labels) {
  const int n = static_cast<int>(successors.size());
  Quotient q(successors);
  bool merged = true;
  while (merged) {
    merged = false;
    for (int u = 0; u < n; ++u) {
      for (int v : successors[u]) {
        if (labels[u] == labels[v] && q.TryMerge(u, v)) merged = true;
      }
    }
  }

  // Number groups in a topological order of the quotient, earliest first node first.
  std::vector<int> root_of(n);
  for (int v = 0; v < n; ++v) root_of[v] = q.Find(v);
  std::vector<int> indegree(n, 0);
  std::vector<std::vector<int>> group_succ(n);
  for (int u = 0; u < n; ++u) {
    for (int v : successors[u]) {
      if (root_of[u] != root_of[v]) group_succ[root_of[u]].push_back(root_of[v]);
    }
  }
  std::vector<int> first_node(n, n);
  for (int v = 0; v < n; ++v) first_node[root_of[v]] = std::min(first_node[root_of[v]], v);
  for (int g = 0; g < n; ++g) {
    auto& s = group_succ[g];
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
    for (int t : s) ++indegree[t];
  }
  using Item = std::pair<int, int>;  // (first node, root)
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> ready;
  for (int v = 0; v < n; ++v) {
    if (root_of[v] == v && indegree[v] == 0) ready.push({first_node[v], v});
  }
  std::vector<int> id_of_root(n, -1);
  int next_id = 0;
  while (!ready.empty()) {
    int g = ready.top().second;
    ready.pop();
    id_of_root[g] = next_id++;
    for (int t : group_succ[g]) {
      if (--indegree[t] == 0) ready.push({first_node[t], t});
    }
  }
  std::vector<int> group(n);
  for (int v = 0; v < n; ++v) group[v] = id_of_root[root_of[v]];
  return group;
}

}  // namespace ortc::partition
