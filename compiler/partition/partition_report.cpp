// Text and JSON views of a partition.
#include "partition/partition_report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "base/element_types.h"
#include "base/report_json.h"
#include "graph/dynamic_shapes.h"
#include "partition/dynamic_report.h"

namespace ortc::partition {
namespace {

nlohmann::json ValueJson(const graph::Graph& g, int v) {
  const auto& val = g.values[v];
  return {{"name", val.name},
          {"dtype", ElementTypeName(val.info.dtype)},
          {"shape", val.info.shape.ToJson()}};
}

std::string OpsetText(const graph::Model& m) {
  std::string s;
  for (const auto& [domain, version] : m.opsets) {
    if (!s.empty()) s += ", ";
    s += (domain.empty() ? "ai.onnx" : domain) + " " + std::to_string(version);
  }
  return s;
}

std::string ValueList(const graph::Graph& g, const std::vector<int>& values) {
  std::string s;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i == 4) return s + ", ... (" + std::to_string(values.size()) + " in all)";
    const auto& v = g.values[values[i]];
    s += (i ? ", " : "") + v.name + " " + ElementTypeName(v.info.dtype) + v.info.shape.ToString();
  }
  return s.empty() ? "-" : s;
}

std::string OpText(const graph::Node& node) {
  return node.domain.empty() ? node.op_type : node.domain + "::" + node.op_type;
}

// used: it took nodes; unused: it could, but took none; unavailable: it cannot compile here.
std::string BackendStatus(const backends::Backend& b, int groups) {
  if (!b.can_compile()) return "unavailable";
  return groups > 0 ? "used" : "unused";
}

}  // namespace

void AddRefusals(const graph::Graph& g, const Partition& p, std::vector<RefusalGroup>* groups) {
  for (const auto& r : p.refusals) {
    const auto& node = g.nodes[r.node];
    const std::string backend(r.backend->name());
    auto it = std::find_if(groups->begin(), groups->end(), [&](const RefusalGroup& x) {
      return x.backend == backend && x.reason == r.reason;
    });
    if (it == groups->end()) it = groups->insert(groups->end(), {backend, r.reason, {}, {}});
    it->nodes.push_back(node.name);
    const std::string op = OpText(node);
    if (std::find(it->ops.begin(), it->ops.end(), op) == it->ops.end()) {
      it->ops.insert(std::upper_bound(it->ops.begin(), it->ops.end(), op), op);
    }
  }
  std::stable_sort(groups->begin(), groups->end(),
                   [](const auto& x, const auto& y) { return x.nodes.size() > y.nodes.size(); });
}

nlohmann::json RefusalJson(const RefusalGroup& r) {
  return {{"backend", r.backend},
          {"reason", r.reason},
          {"node_count", r.nodes.size()},
          {"nodes", r.nodes},
          {"ops", r.ops}};
}

nlohmann::json PartitionToJson(const graph::Model& model, const Partition& p) {
  const auto& g = model.graph;
  nlohmann::json j;
  j["model"] = tools::FileJson(model.display_name);
  j["ir_version"] = model.ir_version;
  nlohmann::json opsets = nlohmann::json::object();
  for (const auto& [domain, version] : model.opsets)
    opsets[domain.empty() ? "ai.onnx" : domain] = version;
  j["opsets"] = opsets;
  j["node_count"] = g.nodes.size();
  j["initializer_bytes"] = g.TotalInitializerBytes();
  j["backends"] = nlohmann::json::array();
  for (const auto* b : p.backends) {
    int nodes = 0;
    for (const auto& grp : p.groups) {
      if (grp.backend == b) nodes += static_cast<int>(grp.nodes.size());
    }
    j["backends"].push_back({{"backend", b->name()},
                             {"status", BackendStatus(*b, p.CountGroups(b))},
                             {"detail", b->status_line()},
                             {"group_count", p.CountGroups(b)},
                             {"node_count", nodes}});
  }
  j["groups"] = nlohmann::json::array();
  for (const auto& grp : p.groups) {
    nlohmann::json jg;
    jg["name"] = grp.name();
    jg["backend"] = grp.backend->name();
    jg["node_count"] = grp.nodes.size();
    jg["nodes"] = nlohmann::json::array();
    for (int n : grp.nodes) jg["nodes"].push_back(g.nodes[n].name);
    jg["inputs"] = nlohmann::json::array();
    for (int v : grp.inputs) jg["inputs"].push_back(ValueJson(g, v));
    jg["outputs"] = nlohmann::json::array();
    for (int v : grp.outputs) jg["outputs"].push_back(ValueJson(g, v));
    jg["initializer_count"] = grp.initializers.size();
    jg["initializer_bytes"] = grp.initializer_bytes;
    j["groups"].push_back(jg);
  }
  std::vector<RefusalGroup> refusals;
  AddRefusals(g, p, &refusals);
  j["refusals"] = nlohmann::json::array();
  for (const auto& r : refusals) j["refusals"].push_back(RefusalJson(r));
  j["unplaced"] = nlohmann::json::array();
  for (int n : p.unplaced) j["unplaced"].push_back(g.nodes[n].name);
  // Nodes evaluated at compile time (shape folding); they are in no group.
  j["folded"] = nlohmann::json::array();
  for (const auto& f : model.folded_nodes)
    j["folded"].push_back({{"node", f.name}, {"op", f.op_type}});
  // Nodes rewritten into older standard ops at load (their parts are in the groups): ONNX
  // Runtime's com.microsoft ops and ai.onnx ops newer than ortc's ONNX library; only written
  // when there are some.
  for (const auto& x : model.expanded_nodes)
    j["expanded"].push_back({{"node", x.name}, {"op", x.domain + "::" + x.op_type}});
  // Values whose shapes are still dynamic, traced to their roots.
  AddDynamicShapesJson(model, graph::ExplainDynamicShapes(model), &j);
  return j;
}

std::string PartitionToText(const graph::Model& model, const Partition& p) {
  const auto& g = model.graph;
  std::ostringstream out;
  out << "model " << model.display_name << "\n  IR " << model.ir_version << ", " << OpsetText(model)
      << "; " << g.nodes.size() << " nodes, " << g.initializers.size() << " initializers ("
      << FormatBytes(g.TotalInitializerBytes()) << ")\n";
  if (!model.folded_nodes.empty()) {
    std::map<std::string, int> ops;
    for (const auto& f : model.folded_nodes) ops[f.op_type]++;
    out << "  shape folding: " << model.folded_nodes.size()
        << " node(s) evaluated at compile time:";
    for (const auto& [op, count] : ops)
      out << " " << op << (count > 1 ? "x" + std::to_string(count) : "");
    out << "\n";
  }
  // One line per domain: "contrib ops" for com.microsoft, "newer ops" for ai.onnx ops the
  // linked ONNX library predates.
  for (const char* domain : {"com.microsoft", "ai.onnx"}) {
    std::map<std::string, int> ops;
    size_t n = 0;
    for (const auto& x : model.expanded_nodes) {
      if (x.domain != domain) continue;
      ops[x.op_type]++;
      ++n;
    }
    if (n == 0) continue;
    out << (std::string(domain) == "com.microsoft" ? "  contrib ops: " : "  newer ops: ") << n
        << " " << domain << " node(s) expanded into "
        << (std::string(domain) == "com.microsoft" ? "standard ops:" : "older ops:");
    for (const auto& [op, count] : ops)
      out << " " << op << (count > 1 ? "x" + std::to_string(count) : "");
    out << "\n";
  }
  out << "backends (in priority order):\n";
  for (const auto* b : p.backends) {
    out << "  " << b->name() << ": " << p.CountGroups(b) << " group(s)  [" << b->status_line()
        << "]\n";
  }
  out << "\ngroups (execution order):\n";
  for (const auto& grp : p.groups) {
    std::map<std::string, int> ops;
    for (int n : grp.nodes) ops[g.nodes[n].op_type]++;
    out << "  " << grp.name() << ": " << grp.nodes.size() << " node(s), weights "
        << FormatBytes(grp.initializer_bytes) << " in " << grp.initializers.size()
        << " initializer(s)\n";
    out << "    ops:";
    for (const auto& [op, count] : ops)
      out << " " << op << (count > 1 ? "x" + std::to_string(count) : "");
    out << "\n    in:  " << ValueList(g, grp.inputs) << "\n    out: " << ValueList(g, grp.outputs)
        << "\n";
  }
  // Refusals, folded by backend and reason so a large model stays readable.
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> folded;
  for (const auto& r : p.refusals)
    folded[{std::string(r.backend->name()), r.reason}].push_back(g.nodes[r.node].name);
  if (!folded.empty()) out << "\nrefused:\n";
  for (const auto& [key, nodes] : folded) {
    out << "  " << key.first << ": " << key.second << " (" << nodes.size() << " node(s): ";
    for (size_t i = 0; i < nodes.size() && i < 3; ++i) out << (i ? ", " : "") << nodes[i];
    out << (nodes.size() > 3 ? ", ...)" : ")") << "\n";
  }
  if (!p.unplaced.empty()) {
    out << "\nunplaced (no backend accepts them): " << p.unplaced.size() << " node(s)\n";
  }
  out << DynamicShapesText(model, graph::ExplainDynamicShapes(model));
  return out.str();
}

}  // namespace ortc::partition
