// Text and JSON views of the dynamic shapes that remain after --input-shape and shape folding.
#include "partition/dynamic_report.h"

#include <sstream>

#include "base/element_types.h"

namespace ortc::partition {
namespace {

std::string Described(const graph::Value& v) {
  return v.name + " " + v.info.shape.ToString();
}

}  // namespace

void AddDynamicShapesJson(const graph::Model& model, const graph::DynamicShapeReport& r,
                          nlohmann::json* j) {
  const auto& g = model.graph;
  auto roots = nlohmann::json::array();
  for (const auto& root : r.roots) {
    const bool input = root.kind == graph::DynamicRoot::Kind::kGraphInput;
    nlohmann::json jr = {{"kind", input ? "graph_input" : "node"}, {"name", root.name}};
    if (!input) jr["op"] = root.op_type;
    jr["reason"] = root.reason;
    if (!root.fix.empty()) jr["fix"] = root.fix;
    jr["value_count"] = root.values.size();
    roots.push_back(jr);
  }
  auto values = nlohmann::json::array();
  for (const auto& d : r.values) {
    const auto& v = g.values[d.value];
    std::string reason;
    for (int k : d.roots) reason += (reason.empty() ? "" : "; ") + graph::RootText(r.roots[k]);
    values.push_back({{"name", v.name},
                      {"dtype", ElementTypeName(v.info.dtype)},
                      {"shape", v.info.shape.ToJson()},
                      {"reason", reason},
                      {"roots", d.roots}});
  }
  (*j)["dynamic_roots"] = roots;
  (*j)["dynamic_values"] = values;
}

std::string DynamicShapesText(const graph::Model& model, const graph::DynamicShapeReport& r) {
  if (r.values.empty()) return "";
  constexpr size_t kExamples = 3;
  const auto& g = model.graph;
  std::ostringstream out;
  out << "\ndynamic shapes: " << r.values.size()
      << " value(s) not static after --input-shape and shape folding, from " << r.roots.size()
      << " root cause(s):\n";
  for (const auto& root : r.roots) {
    out << "  " << graph::RootText(root) << "\n    " << root.values.size() << " value(s): ";
    for (size_t i = 0; i < root.values.size() && i < kExamples; ++i)
      out << (i ? ", " : "") << Described(g.values[root.values[i]]);
    out << (root.values.size() > kExamples ? ", ...\n" : "\n");
  }
  return out.str();
}

}  // namespace ortc::partition
