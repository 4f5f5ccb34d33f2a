// Graph queries and shape/dtype formatting.
#include "graph/graph.h"

#include "base/shape_json.h"

#include <onnx/onnx_pb.h>

#include <algorithm>

namespace ortc::graph {

bool Shape::is_static() const {
  if (!rank_known) return false;
  return std::all_of(dims.begin(), dims.end(), [](const Dim& d) { return d.known(); });
}

std::vector<int64_t> Shape::Sizes() const {
  std::vector<int64_t> sizes;
  for (const Dim& d : dims) sizes.push_back(d.known() ? d.value : -1);
  return sizes;
}

std::string Shape::ToString() const {
  if (!rank_known) return "?";
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    if (dims[i].known()) {
      s += std::to_string(dims[i].value);
    } else {
      s += dims[i].symbol.empty() ? "?" : dims[i].symbol;
    }
  }
  return s + "]";
}

nlohmann::json Shape::ToJson() const {
  std::vector<int64_t> values;
  std::vector<std::string> symbols;
  for (const auto& d : dims) {
    values.push_back(d.known() ? d.value : -1);
    symbols.push_back(d.symbol);
  }
  return tools::ShapeJson(values, symbols, rank_known);
}

int Graph::FindValue(const std::string& name) const {
  auto it = value_index.find(name);
  return it == value_index.end() ? -1 : it->second;
}

std::vector<int> Graph::Predecessors(int node) const {
  std::vector<int> preds;
  auto add = [&](int v) {
    if (v >= 0 && values[v].producer >= 0) preds.push_back(values[v].producer);
  };
  for (int v : nodes[node].inputs) add(v);
  for (int v : nodes[node].implicit_inputs) add(v);
  std::sort(preds.begin(), preds.end());
  preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
  return preds;
}

std::vector<int> Graph::Successors(int node) const {
  std::vector<int> succs;
  for (int v : nodes[node].outputs) {
    if (v < 0) continue;
    succs.insert(succs.end(), values[v].consumers.begin(), values[v].consumers.end());
  }
  std::sort(succs.begin(), succs.end());
  succs.erase(std::unique(succs.begin(), succs.end()), succs.end());
  return succs;
}

int64_t Graph::TotalInitializerBytes() const {
  int64_t total = 0;
  for (const auto& init : initializers) total += init.byte_size;
  return total;
}

}  // namespace ortc::graph
