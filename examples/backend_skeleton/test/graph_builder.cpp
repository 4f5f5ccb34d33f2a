// GraphBuilder: each call appends a value or node view whose pointers stay valid as the graph
// grows.
#include "graph_builder.h"

#include "test_support.h"

namespace npu_test {

int GraphBuilder::Value(const std::string& name, int32_t dtype, std::vector<int64_t> dims,
                        bool graph_input) {
  OrtcValueView v{};
  v.name = Keep(name);
  v.dtype = dtype;
  v.rank = static_cast<int32_t>(dims.size());
  dims_.push_back(std::move(dims));
  v.dims = dims_.back().data();
  v.producer = -1;
  v.is_graph_input = graph_input;
  values_.push_back(v);
  return static_cast<int>(values_.size() - 1);
}

int GraphBuilder::Constant(const std::string& name, int32_t dtype, std::vector<int64_t> dims,
                           const std::string& bytes) {
  const int v = Value(name, dtype, std::move(dims));
  bytes_.push_back(bytes);
  values_[v].is_constant = 1;
  values_[v].data = bytes_.back().data();
  values_[v].byte_size = bytes.size();
  return v;
}

int GraphBuilder::External(const std::string& name, int32_t dtype, std::vector<int64_t> dims,
                           const std::string& file, uint64_t offset, uint64_t size) {
  const int v = Value(name, dtype, std::move(dims));
  values_[v].is_constant = 1;
  values_[v].byte_size = size;
  values_[v].external_file = Keep(file);
  values_[v].external_offset = offset;
  return v;
}

int GraphBuilder::Scale(const std::string& name, float s) {
  return Constant(name, kFloat, {}, Bytes<float>({s}));
}

int GraphBuilder::ZeroPoint(const std::string& name, int32_t dtype, int32_t z) {
  if (dtype == kInt8) return Constant(name, kInt8, {}, Bytes<int8_t>({static_cast<int8_t>(z)}));
  if (dtype == kUint8)
    return Constant(name, kUint8, {1}, Bytes<uint8_t>({static_cast<uint8_t>(z)}));
  return Constant(name, kInt32, {}, Bytes<int32_t>({z}));
}

int GraphBuilder::Node(const std::string& op, std::vector<int32_t> inputs,
                       std::vector<int32_t> outputs, const std::vector<Attr>& attrs) {
  OrtcNodeView n{};
  n.name = Keep(op + "_" + std::to_string(nodes_.size()));
  n.op_type = Keep(op);
  n.domain = Keep("");
  n.since_version = 21;
  indices_.push_back(std::move(inputs));
  n.inputs = indices_.back().data();
  n.num_inputs = static_cast<uint32_t>(indices_.back().size());
  indices_.push_back(std::move(outputs));
  n.outputs = indices_.back().data();
  n.num_outputs = static_cast<uint32_t>(indices_.back().size());
  std::vector<OrtcAttributeView> views;
  for (const Attr& a : attrs) {
    OrtcAttributeView view{};
    view.name = Keep(a.name);
    view.type = a.type;
    view.i = a.i;
    if (a.type == 7) {
      ints_.push_back(a.ints);
      view.ints = ints_.back().data();
      view.count = static_cast<uint32_t>(a.ints.size());
    }
    if (a.type == 3) {
      view.s = Keep(a.s);
      view.s_size = a.s.size();
    }
    views.push_back(view);
  }
  attrs_.push_back(std::move(views));
  n.attributes = attrs_.back().data();
  n.num_attributes = static_cast<uint32_t>(attrs_.back().size());
  for (const int32_t out : indices_.back())
    if (out >= 0) values_[out].producer = static_cast<int32_t>(nodes_.size());
  nodes_.push_back(n);
  return static_cast<int>(nodes_.size() - 1);
}

OrtcGraphView GraphBuilder::View() const {
  OrtcGraphView g{};
  g.struct_size = sizeof(OrtcGraphView);
  g.nodes = nodes_.data();
  g.num_nodes = static_cast<uint32_t>(nodes_.size());
  g.values = values_.data();
  g.num_values = static_cast<uint32_t>(values_.size());
  return g;
}

const char* GraphBuilder::Keep(const std::string& s) {
  strings_.push_back(s);
  return strings_.back().c_str();
}

}  // namespace npu_test
