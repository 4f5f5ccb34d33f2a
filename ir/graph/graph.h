// The compiler's in-memory graph: values and nodes in topological order, with shapes where
// known. Small on purpose: it indexes the ONNX protos of a loaded Model instead of copying them.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace onnx {
class NodeProto;
class TensorProto;
}  // namespace onnx

namespace ortc::graph {

// One dimension: a known size (>= 0), a named symbol ("batch"), or neither.
struct Dim {
  int64_t value = -1;
  std::string symbol;
  bool known() const { return value >= 0; }
};

struct Shape {
  bool rank_known = false;
  std::vector<Dim> dims;

  bool is_static() const;
  // Each dimension's size, -1 where it is not known.
  std::vector<int64_t> Sizes() const;
  std::string ToString() const;  // "[1,3,224,224]", "[batch,?]" or "?"
  // The --json reports' form (base/shape_json.h): [1, 3, "batch", null], or null.
  nlohmann::json ToJson() const;
};

// Element type as ONNX's TensorProto::DataType number (0 = undefined / not a tensor).
struct TensorInfo {
  int32_t dtype = 0;
  Shape shape;
};

struct ExternalLocation {
  std::filesystem::path file;  // resolved path
  std::string location;        // as written in the model, relative to its folder
  int64_t offset = 0;
  int64_t length = 0;
};

struct Initializer {
  std::string name;
  int32_t dtype = 0;
  std::vector<int64_t> dims;
  int64_t byte_size = 0;
  std::optional<ExternalLocation> external;
  const onnx::TensorProto* proto = nullptr;  // owned by the Model
};

struct Value {
  std::string name;
  TensorInfo info;
  int producer = -1;           // node index; -1 for graph inputs and initializers
  std::vector<int> consumers;  // node indices, each once, ascending
  bool is_graph_input = false;
  bool is_graph_output = false;
  int initializer = -1;  // index into Graph::initializers, or -1
};

struct Node {
  std::string name;  // never empty: unnamed nodes get "<op>_<index>"
  std::string op_type;
  std::string domain;                // "" for the default ai.onnx domain
  int64_t opset = 0;                 // the model's opset for this domain
  int since_version = 0;             // version of the op definition in effect; 0 when unknown
  std::vector<int> inputs;           // value ids; -1 for an omitted optional input
  std::vector<int> implicit_inputs;  // outer values read inside subgraphs (If/Loop/Scan)
  std::vector<int> outputs;          // value ids; -1 for an omitted optional output
  bool has_subgraphs = false;
  const onnx::NodeProto* proto = nullptr;  // owned by the Model
};

class Graph {
 public:
  std::vector<Node> nodes;  // topological order, stable with respect to the file's order
  std::vector<Value> values;
  std::vector<Initializer> initializers;
  std::vector<int> inputs;   // graph inputs that are not initializers
  std::vector<int> outputs;  // graph outputs

  int FindValue(const std::string& name) const;  // -1 when absent
  // Distinct nodes producing this node's inputs (explicit and implicit), ascending.
  std::vector<int> Predecessors(int node) const;
  // Distinct nodes consuming this node's outputs, ascending.
  std::vector<int> Successors(int node) const;
  int64_t TotalInitializerBytes() const;

  std::unordered_map<std::string, int> value_index;
};

}  // namespace ortc::graph
