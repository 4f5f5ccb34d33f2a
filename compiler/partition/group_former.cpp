// Greedy merging of same-label neighbours with a cycle check on the contracted graph
// (quotient_graph.h), repeated until no merge succeeds (merging never removes a path, so a
// refused pair stays refused unless a third group on its path joins one of them: hence the
// repeat).
#include "partition/group_former.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <utility>

#include "partition/quotient_graph.h"

namespace ortc::partition {

std::vector<int> FormGroups(const std::vector<std::vector<int>>& successors,
                            const std::vector<int>& labels, GroupFormingStats* stats) {
  const int n = static_cast<int>(successors.size());
  QuotientGraph q(successors, stats);
  // Each pass tries the same-label edges in scan order. An edge whose ends share a group stays
  // so, and a merge's outcome depends only on the groups, so a later pass need only retry the
  // edges the previous one refused, in the same order, to decide exactly as a full rescan. And
  // a refusal whose witness is still in a third group stands without a new search.
  struct Edge {
    int u, v;
    int witness = -1;  // refused: a node on another path from u's group to v's
  };
  std::vector<Edge> pending;
  for (int u = 0; u < n; ++u) {
    for (int v : successors[u]) {
      if (labels[u] == labels[v]) pending.push_back({u, v});
    }
  }
  bool merged = true;
  while (merged) {
    merged = false;
    if (stats) ++stats->passes;
    std::vector<Edge> refused;
    for (Edge e : pending) {
      const int a = q.Find(e.u), b = q.Find(e.v);
      if (a == b) continue;
      if (e.witness >= 0) {
        const int w = q.Find(e.witness);
        if (w != a && w != b) {
          refused.push_back(e);
          continue;
        }
      }
      if (q.TryMerge(e.u, e.v, &e.witness)) {
        merged = true;
      } else {
        refused.push_back(e);
      }
    }
    pending = std::move(refused);
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
