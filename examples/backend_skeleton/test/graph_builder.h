// Graph views built by hand, as the host would hand them to the compile side: values (inputs,
// constants, external-file weights), nodes with attributes, and the OrtcGraphView over them.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include <ortc/ortc_backend_plugin.h>

namespace npu_test {

struct Attr {
  std::string name;
  int32_t type;
  int64_t i = 0;
  std::vector<int64_t> ints;
  std::string s;
};

inline Attr Int(const std::string& name, int64_t v) {
  return {name, 2, v, {}, {}};
}
inline Attr Ints(const std::string& name, std::vector<int64_t> v) {
  return {name, 7, 0, std::move(v), {}};
}
inline Attr Text(const std::string& name, const std::string& v) {
  return {name, 3, 0, {}, v};
}

// Every string and array lives in a deque, so the pointers the views hold stay put while the
// graph grows.
class GraphBuilder {
 public:
  int Value(const std::string& name, int32_t dtype, std::vector<int64_t> dims,
            bool graph_input = false);
  int Constant(const std::string& name, int32_t dtype, std::vector<int64_t> dims,
               const std::string& bytes);
  int External(const std::string& name, int32_t dtype, std::vector<int64_t> dims,
               const std::string& file, uint64_t offset, uint64_t size);
  int Scale(const std::string& name, float s);
  int ZeroPoint(const std::string& name, int32_t dtype, int32_t z);
  int Node(const std::string& op, std::vector<int32_t> inputs, std::vector<int32_t> outputs,
           const std::vector<Attr>& attrs = {});
  void MarkOutput(int v) { values_[v].is_graph_output = 1; }
  OrtcValueView& value(int v) { return values_[v]; }
  const OrtcNodeView& node(int n) const { return nodes_[n]; }
  uint32_t num_nodes() const { return static_cast<uint32_t>(nodes_.size()); }

  OrtcGraphView View() const;

 private:
  const char* Keep(const std::string& s);

  std::deque<std::string> strings_, bytes_;
  std::deque<std::vector<int64_t>> dims_, ints_;
  std::deque<std::vector<int32_t>> indices_;
  std::deque<std::vector<OrtcAttributeView>> attrs_;
  std::vector<OrtcValueView> values_;
  std::vector<OrtcNodeView> nodes_;
};

}  // namespace npu_test
