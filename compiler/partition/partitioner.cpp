// Backend assignment, grouping, and each group's boundary (inputs, outputs, weights).
#include "partition/partitioner.h"

#include <algorithm>
#include <set>

#include <spdlog/spdlog.h>

#include "partition/group_former.h"
#include "registry.h"

namespace ortc::partition {

std::string Group::name() const {
  return std::string(backend->name()) + "_" + std::to_string(index);
}

int Partition::CountGroups(const backends::Backend* b) const {
  return static_cast<int>(
      std::count_if(groups.begin(), groups.end(), [&](const Group& g) { return g.backend == b; }));
}

namespace {

void FillBoundary(const graph::Graph& g, const std::vector<int>& group_of_node, int gid,
                  Group* grp) {
  std::set<int> seen_in, seen_init;
  for (int n : grp->nodes) {
    const auto& node = g.nodes[n];
    std::vector<int> reads = node.inputs;
    reads.insert(reads.end(), node.implicit_inputs.begin(), node.implicit_inputs.end());
    for (int v : reads) {
      if (v < 0) continue;
      const auto& val = g.values[v];
      if (val.initializer >= 0) {
        if (seen_init.insert(val.initializer).second) {
          grp->initializers.push_back(val.initializer);
          grp->initializer_bytes += g.initializers[val.initializer].byte_size;
        }
      } else if (val.producer < 0 || group_of_node[val.producer] != gid) {
        if (seen_in.insert(v).second) grp->inputs.push_back(v);
      }
    }
    for (int v : node.outputs) {
      if (v < 0) continue;
      const auto& val = g.values[v];
      bool used_outside = val.is_graph_output;
      for (int c : val.consumers) used_outside = used_outside || group_of_node[c] != gid;
      if (used_outside) grp->outputs.push_back(v);
    }
  }
}

}  // namespace

Partition PartitionGraph(const graph::Graph& g, std::vector<const backends::Backend*> requested) {
  Partition p;
  const backends::Backend* fallback = nullptr;
  for (const auto* b : requested) {
    if (b->is_fallback()) {
      fallback = b;
    } else if (std::find(p.backends.begin(), p.backends.end(), b) == p.backends.end()) {
      p.backends.push_back(b);
    }
  }
  if (!fallback) {
    for (const auto* b : backends::AllBackends()) {
      if (b->is_fallback()) fallback = b;
    }
  }
  p.backends.push_back(fallback);

  const int n = static_cast<int>(g.nodes.size());
  // Each backend answers for the whole graph at once (one call through the plugin ABI).
  std::vector<std::vector<backends::NodeSupport>> answers;
  for (const auto* b : p.backends) {
    answers.push_back(b->Capability(g));
    answers.back().resize(n, backends::NodeSupport::No("no answer"));
  }
  std::vector<int> label(n, -1);
  for (int i = 0; i < n; ++i) {
    for (int b = 0; b < static_cast<int>(p.backends.size()); ++b) {
      const auto& answer = answers[b][i];
      if (answer.supported) {
        label[i] = b;
        break;
      }
      p.refusals.push_back({i, p.backends[b], answer.reason});
      spdlog::debug("partition: {} refuses node '{}' ({}): {}", p.backends[b]->name(),
                    g.nodes[i].name, g.nodes[i].op_type, answer.reason);
    }
    if (label[i] < 0) p.unplaced.push_back(i);
  }
  // Unplaced nodes get a label of their own each, so they never join a group.
  std::vector<int> labels = label;
  for (int i = 0; i < n; ++i) {
    if (labels[i] < 0) labels[i] = static_cast<int>(p.backends.size()) + i;
  }
  std::vector<std::vector<int>> succ(n);
  for (int i = 0; i < n; ++i) succ[i] = g.Successors(i);
  std::vector<int> gid = FormGroups(succ, labels);

  const int group_count = n == 0 ? 0 : *std::max_element(gid.begin(), gid.end()) + 1;
  std::vector<Group> all(group_count);
  for (int i = 0; i < n; ++i) all[gid[i]].nodes.push_back(i);
  std::vector<int> new_id(group_count, -1);
  std::vector<int> per_backend(p.backends.size(), 0);
  for (int id = 0; id < group_count; ++id) {
    const int b = label[all[id].nodes.front()];
    if (b < 0) continue;  // an unplaced node
    all[id].backend = p.backends[b];
    all[id].index = per_backend[b]++;
    new_id[id] = static_cast<int>(p.groups.size());
    p.groups.push_back(std::move(all[id]));
  }
  p.group_of_node.assign(n, -1);
  for (int i = 0; i < n; ++i) p.group_of_node[i] = new_id[gid[i]];
  for (int id = 0; id < static_cast<int>(p.groups.size()); ++id) {
    FillBoundary(g, p.group_of_node, id, &p.groups[id]);
    const Group& grp = p.groups[id];
    spdlog::info("partition: group {} on {}: {} node(s), {} input(s), {} output(s)", id,
                 grp.backend->name(), grp.nodes.size(), grp.inputs.size(), grp.outputs.size());
  }
  for (int i : p.unplaced)
    spdlog::info("partition: node '{}' ({}) runs on no backend", g.nodes[i].name,
                 g.nodes[i].op_type);
  return p;
}

Status CheckPartition(const graph::Graph& g, const Partition& p, int max_partitions) {
  if (!p.unplaced.empty()) {
    std::string list;
    for (size_t k = 0; k < p.unplaced.size() && k < 5; ++k) {
      const auto& node = g.nodes[p.unplaced[k]];
      std::string reason;
      for (const auto& r : p.refusals) {
        if (r.node == p.unplaced[k] && r.backend->is_fallback()) reason = r.reason;
      }
      list += "\n  '" + node.name + "' (" + node.op_type + "): " + reason;
    }
    if (p.unplaced.size() > 5)
      list += "\n  ... and " + std::to_string(p.unplaced.size() - 5) + " more";
    return NotImplemented(std::to_string(p.unplaced.size()) +
                          " node(s) cannot run on any backend, not even the CPU:" + list);
  }
  if (max_partitions > 0) {
    for (const auto* b : p.backends) {
      const int count = p.CountGroups(b);
      if (count > max_partitions) {
        return NotImplemented("backend " + std::string(b->name()) + " would get " +
                              std::to_string(count) + " partitions, more than --max-partitions " +
                              std::to_string(max_partitions) +
                              "; raise the limit, or see the refused nodes that split it");
      }
    }
  }
  return Status::Ok();
}

}  // namespace ortc::partition
