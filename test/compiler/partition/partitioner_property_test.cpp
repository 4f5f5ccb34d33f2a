// Property tests of partitioning on many random DAGs with random capability masks:
// priority order, connectivity, convexity, acyclic contraction, local maximality, boundaries,
// determinism. Properties are checked by code independent of the partitioner's own.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <queue>
#include <random>
#include <set>

#include "partition/group_former.h"
#include "partition/partitioner.h"

using ortc::backends::Backend;
using ortc::backends::NodeSupport;
using ortc::graph::Graph;

namespace {

// A backend that accepts exactly the nodes its mask says (node names are "n<index>").
class MaskBackend final : public Backend {
 public:
  MaskBackend(std::string name, std::vector<bool> mask, bool fallback)
      : name_(std::move(name)), mask_(std::move(mask)), fallback_(fallback) {}
  std::string_view name() const override { return name_; }
  std::string_view ep_source() const override { return name_; }
  std::string_view status_line() const override { return "test"; }
  bool is_fallback() const override { return fallback_; }
  std::vector<NodeSupport> Capability(const Graph& g) const override {
    std::vector<NodeSupport> answers;
    for (const auto& n : g.nodes)
      answers.push_back(mask_[std::stoi(n.name.substr(1))] ? NodeSupport::Yes()
                                                           : NodeSupport::No("masked"));
    return answers;
  }

 private:
  std::string name_;
  std::vector<bool> mask_;
  bool fallback_;
};

// n nodes in topological order; node i reads 1..3 outputs of earlier nodes (or the graph input).
Graph RandomDag(std::mt19937& rng, int n) {
  Graph g;
  auto add_value = [&](const std::string& name) {
    g.value_index[name] = static_cast<int>(g.values.size());
    g.values.push_back({.name = name});
    return static_cast<int>(g.values.size()) - 1;
  };
  const int x = add_value("x");
  g.values[x].is_graph_input = true;
  g.inputs.push_back(x);
  for (int i = 0; i < n; ++i) {
    ortc::graph::Node node;
    node.name = "n" + std::to_string(i);
    node.op_type = "Op";
    std::set<int> reads;
    const int fan_in = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < fan_in; ++k) {
      if (i == 0 || rng() % 8 == 0) {
        reads.insert(x);
      } else {
        // Prefer recent nodes so graphs are deep, not only wide.
        const int window = rng() % 2 ? std::min(i, 4) : i;
        const int back = 1 + static_cast<int>(rng() % window);
        reads.insert(g.nodes[i - back].outputs[0]);
      }
    }
    node.inputs.assign(reads.begin(), reads.end());
    const int out = add_value("v" + std::to_string(i));
    g.values[out].producer = i;
    node.outputs.push_back(out);
    for (int v : node.inputs) g.values[v].consumers.push_back(i);
    g.nodes.push_back(node);
  }
  for (auto& v : g.values) {
    if (v.consumers.empty() && v.producer >= 0) {
      v.is_graph_output = true;
      g.outputs.push_back(g.value_index[v.name]);
    }
  }
  return g;
}

std::vector<std::vector<int>> Successors(const Graph& g) {
  std::vector<std::vector<int>> succ(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) succ[i] = g.Successors(static_cast<int>(i));
  return succ;
}

// Group-level edges (excluding self loops), computed independently of the partitioner.
std::vector<std::set<int>> QuotientEdges(const Graph& g, const std::vector<int>& group_of,
                                         int groups) {
  std::vector<std::set<int>> edges(groups);
  for (size_t u = 0; u < g.nodes.size(); ++u) {
    for (int v : g.Successors(static_cast<int>(u))) {
      if (group_of[u] >= 0 && group_of[v] >= 0 && group_of[u] != group_of[v])
        edges[group_of[u]].insert(group_of[v]);
    }
  }
  return edges;
}

bool Reaches(const std::vector<std::set<int>>& edges, int from, int to,
             std::pair<int, int> skip_edge) {
  std::vector<bool> seen(edges.size(), false);
  std::vector<int> stack = {from};
  while (!stack.empty()) {
    int a = stack.back();
    stack.pop_back();
    for (int b : edges[a]) {
      if (a == skip_edge.first && b == skip_edge.second) continue;
      if (b == to) return true;
      if (!seen[b]) {
        seen[b] = true;
        stack.push_back(b);
      }
    }
  }
  return false;
}

void CheckPartitionProperties(const Graph& g, const ortc::partition::Partition& p,
                              const std::vector<const MaskBackend*>& order,
                              const std::vector<std::vector<bool>>& masks) {
  const int n = static_cast<int>(g.nodes.size());
  const int groups = static_cast<int>(p.groups.size());
  // 1. Priority: each node is on the first backend whose mask accepts it, or unplaced.
  for (int i = 0; i < n; ++i) {
    int expected = -1;
    for (size_t b = 0; b < masks.size(); ++b) {
      if (masks[b][i]) {
        expected = static_cast<int>(b);
        break;
      }
    }
    if (expected < 0) {
      REQUIRE(p.group_of_node[i] == -1);
      REQUIRE(std::count(p.unplaced.begin(), p.unplaced.end(), i) == 1);
    } else {
      REQUIRE(p.group_of_node[i] >= 0);
      REQUIRE(p.groups[p.group_of_node[i]].backend == order[expected]);
    }
  }
  // 2. Every placed node is in exactly the group that lists it; groups are connected.
  for (int gi = 0; gi < groups; ++gi) {
    const auto& nodes = p.groups[gi].nodes;
    REQUIRE_FALSE(nodes.empty());
    for (int v : nodes) REQUIRE(p.group_of_node[v] == gi);
    std::set<int> members(nodes.begin(), nodes.end()), reached = {nodes[0]};
    std::vector<int> stack = {nodes[0]};
    while (!stack.empty()) {
      int a = stack.back();
      stack.pop_back();
      std::vector<int> nb = g.Successors(a);
      auto preds = g.Predecessors(a);
      nb.insert(nb.end(), preds.begin(), preds.end());
      for (int b : nb) {
        if (members.count(b) && reached.insert(b).second) stack.push_back(b);
      }
    }
    REQUIRE(reached.size() == members.size());
  }
  // 3. Convexity of each group: no path leaves it and comes back (node-level search).
  for (int gi = 0; gi < groups; ++gi) {
    std::vector<bool> seen(n, false);
    std::vector<int> stack;
    for (int m : p.groups[gi].nodes) {
      for (int s : g.Successors(m)) {
        if (p.group_of_node[s] != gi && !seen[s]) {
          seen[s] = true;
          stack.push_back(s);
        }
      }
    }
    while (!stack.empty()) {
      int a = stack.back();
      stack.pop_back();
      REQUIRE(p.group_of_node[a] != gi);
      for (int s : g.Successors(a)) {
        if (!seen[s]) {
          seen[s] = true;
          stack.push_back(s);
        }
      }
    }
  }
  // 4. Contracting all groups gives a DAG, and the groups are listed in a topological order.
  // Unplaced nodes count as groups of their own: paths through them matter too.
  std::vector<int> quotient_id = p.group_of_node;
  int next = groups;
  for (int& q : quotient_id) {
    if (q < 0) q = next++;
  }
  auto edges = QuotientEdges(g, quotient_id, next);
  for (int a = 0; a < groups; ++a) {
    for (int b : edges[a]) {
      if (b < groups) REQUIRE(a < b);
    }
  }
  {  // Acyclic including unplaced nodes: Kahn's algorithm consumes every quotient node.
    std::vector<int> indegree(next, 0);
    for (const auto& e : edges) {
      for (int b : e) ++indegree[b];
    }
    std::vector<int> ready;
    for (int q = 0; q < next; ++q) {
      if (indegree[q] == 0) ready.push_back(q);
    }
    int done = 0;
    while (!ready.empty()) {
      int q = ready.back();
      ready.pop_back();
      ++done;
      for (int b : edges[q]) {
        if (--indegree[b] == 0) ready.push_back(b);
      }
    }
    REQUIRE(done == next);
  }
  // 5. Local maximality: any two same-backend groups joined by an edge cannot be merged,
  //    because another path between them would then close a cycle.
  for (int u = 0; u < n; ++u) {
    for (int v : g.Successors(u)) {
      const int a = p.group_of_node[u], b = p.group_of_node[v];
      if (a < 0 || b < 0 || a == b || p.groups[a].backend != p.groups[b].backend) continue;
      INFO("groups " << a << " and " << b << " could be merged");
      REQUIRE(Reaches(edges, a, b, {a, b}));
    }
  }
  // 6. Boundaries: inputs are exactly the values read from outside the group.
  for (int gi = 0; gi < groups; ++gi) {
    std::set<int> expected_in, expected_out;
    for (int m : p.groups[gi].nodes) {
      for (int v : g.nodes[m].inputs) {
        if (g.values[v].producer < 0 || p.group_of_node[g.values[v].producer] != gi)
          expected_in.insert(v);
      }
      for (int v : g.nodes[m].outputs) {
        bool outside = g.values[v].is_graph_output;
        for (int c : g.values[v].consumers) outside |= p.group_of_node[c] != gi;
        if (outside) expected_out.insert(v);
      }
    }
    const auto& grp = p.groups[gi];
    REQUIRE(std::set<int>(grp.inputs.begin(), grp.inputs.end()) == expected_in);
    REQUIRE(std::set<int>(grp.outputs.begin(), grp.outputs.end()) == expected_out);
  }
}

}  // namespace

TEST_CASE("random DAGs partition into connected, convex, maximal groups", "[partition][property]") {
  std::mt19937 rng(20261121);
  for (int trial = 0; trial < 400; ++trial) {
    const int n = 1 + static_cast<int>(rng() % (trial < 300 ? 30 : 200));
    Graph g = RandomDag(rng, n);
    // Two accelerators with random masks of random density, then a CPU that (sometimes)
    // refuses a node too, to exercise unplaced nodes.
    std::vector<std::vector<bool>> masks(3, std::vector<bool>(n));
    const double density_a = (rng() % 100) / 100.0, density_b = (rng() % 100) / 100.0;
    const bool cpu_gaps = trial % 10 == 0;
    for (int i = 0; i < n; ++i) {
      masks[0][i] = (rng() % 1000) < density_a * 1000;
      masks[1][i] = (rng() % 1000) < density_b * 1000;
      masks[2][i] = !cpu_gaps || rng() % 20 != 0;
    }
    MaskBackend a("a", masks[0], false), b("b", masks[1], false), cpu("cpu", masks[2], true);
    INFO("trial " << trial << ", " << n << " nodes");
    auto p = ortc::partition::PartitionGraph(g, {&a, &b, &cpu});
    REQUIRE(p.backends.size() == 3);
    CheckPartitionProperties(g, p, {&a, &b, &cpu}, masks);
    // Determinism: the same input gives the same groups.
    auto again = ortc::partition::PartitionGraph(g, {&a, &b, &cpu});
    REQUIRE(again.group_of_node == p.group_of_node);
  }
}

TEST_CASE("groups that would depend on each other are kept apart", "[partition]") {
  // a1 -> b1, b2 -> a2, b2 -> b1, a1 -> a2: each pair is convex alone, but {a1,a2} together
  // with {b1,b2} would make the contracted graph cyclic.
  // Node ids in topological order: a1=0, b2=1, a2=2, b1=3.
  std::vector<std::vector<int>> succ = {{2, 3}, {2, 3}, {}, {}};
  std::vector<int> labels = {0, 1, 0, 1};
  auto group = ortc::partition::FormGroups(succ, labels);
  const bool a_merged = group[0] == group[2];
  const bool b_merged = group[1] == group[3];
  CHECK_FALSE((a_merged && b_merged));
  CHECK((a_merged || b_merged));  // one of the two merges is possible and must happen
}

TEST_CASE("a path through another backend splits a group", "[partition]") {
  // 0 -> 1 -> 2 and 0 -> 2, with 1 on another backend: {0, 2} would not be convex.
  std::vector<std::vector<int>> succ = {{1, 2}, {2}, {}};
  auto group = ortc::partition::FormGroups(succ, {0, 1, 0});
  CHECK(group[0] != group[2]);
  CHECK(group == std::vector<int>{0, 1, 2});
}

TEST_CASE("max-partitions and unplaced nodes are reported", "[partition]") {
  std::mt19937 rng(7);
  Graph g = RandomDag(rng, 3);  // n0 -> ... chain-ish; force a split with masks below
  // a accepts n0 and n2 only; n1 in between goes to the CPU.
  g.nodes[1].inputs = {g.nodes[0].outputs[0]};
  g.nodes[2].inputs = {g.nodes[1].outputs[0]};
  for (auto& v : g.values) v.consumers.clear();
  for (int i = 0; i < 3; ++i) {
    for (int v : g.nodes[i].inputs) g.values[v].consumers.push_back(i);
  }
  MaskBackend a("a", {true, false, true}, false), cpu("cpu", {true, true, true}, true);
  auto p = ortc::partition::PartitionGraph(g, {&a, &cpu});
  REQUIRE(p.CountGroups(&a) == 2);
  auto s = ortc::partition::CheckPartition(g, p, 1);
  CHECK(s.code() == ortc::StatusCode::kNotImplemented);
  CHECK_THAT(s.message(),
             Catch::Contains("a would get 2 partitions") && Catch::Contains("--max-partitions 1"));
  CHECK(ortc::partition::CheckPartition(g, p, 2).ok());

  MaskBackend picky("cpu", {true, false, true}, true);
  auto q = ortc::partition::PartitionGraph(g, {&picky});
  REQUIRE(q.unplaced == std::vector<int>{1});
  auto u = ortc::partition::CheckPartition(g, q, 0);
  CHECK(u.code() == ortc::StatusCode::kNotImplemented);
  CHECK_THAT(u.message(), Catch::Contains("'n1'") && Catch::Contains("masked"));
}
