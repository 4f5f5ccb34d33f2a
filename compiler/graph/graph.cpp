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

std::string DataTypeName(int32_t dtype) {
  if (dtype == 0) return "undefined";
  if (!onnx::TensorProto_DataType_IsValid(dtype)) return "dtype#" + std::to_string(dtype);
  std::string name =
      onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(dtype));
  std::transform(name.begin(), name.end(), name.begin(), ::tolower);
  return name;
}

int64_t DataTypeBits(int32_t dtype) {
  using T = onnx::TensorProto;
  switch (dtype) {
    case T::FLOAT:
    case T::INT32:
    case T::UINT32:
      return 32;
    case T::DOUBLE:
    case T::INT64:
    case T::UINT64:
    case T::COMPLEX64:
      return 64;
    case T::COMPLEX128:
      return 128;
    case T::FLOAT16:
    case T::BFLOAT16:
    case T::INT16:
    case T::UINT16:
      return 16;
    case T::INT8:
    case T::UINT8:
    case T::BOOL:
      return 8;
    // IR 9 float8 types and IR 10 4-bit types (not in ONNX 1.12's enum, numbered here).
    case 17:
    case 18:
    case 19:
    case 20:
      return 8;
    case 21:
    case 22:
      return 4;
    default:
      return 0;
  }
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
