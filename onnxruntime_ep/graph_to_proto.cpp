#include "graph_to_proto.h"

#include <set>
#include <string>

namespace ortc::ort_ep {

namespace {

// ONNX Runtime's element type enum is numbered as TensorProto.DataType.
Status FillTensorType(Ort::ConstTypeInfo type, onnx::TypeProto* out, const std::string& name) {
  if (type.GetONNXType() != ONNX_TYPE_TENSOR) {
    return NotImplemented(
        "value '" + name +
        "' is not a tensor (sequence, map or optional): ortc compiles tensors only");
  }
  auto info = type.GetTensorTypeAndShapeInfo();
  auto* t = out->mutable_tensor_type();
  t->set_elem_type(static_cast<int32_t>(info.GetElementType()));
  if (!info.HasShape()) return Status::Ok();
  const auto dims = info.GetShape();
  const auto symbols = info.GetSymbolicDimensions();
  auto* shape = t->mutable_shape();
  for (size_t i = 0; i < dims.size(); ++i) {
    auto* d = shape->add_dim();
    if (dims[i] >= 0) {
      d->set_dim_value(dims[i]);
    } else if (i < symbols.size() && symbols[i] && *symbols[i]) {
      d->set_dim_param(symbols[i]);
    }
  }
  return Status::Ok();
}

Status AddValueInfo(Ort::ConstValueInfo vi,
                    google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* out) {
  auto* v = out->Add();
  v->set_name(vi.GetName());
  return FillTensorType(vi.TypeInfo(), v->mutable_type(), v->name());
}

Status FillTensorProto(Ort::ConstValue value, const std::string& name, onnx::TensorProto* t) {
  auto info = value.GetTensorTypeAndShapeInfo();
  t->set_name(name);
  const auto type = info.GetElementType();
  t->set_data_type(static_cast<int32_t>(type));
  for (int64_t d : info.GetShape()) t->add_dims(d);
  if (type == ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING) {
    const size_t n = info.GetElementCount();
    for (size_t i = 0; i < n; ++i) t->add_string_data(value.GetStringTensorElement(i));
    return Status::Ok();
  }
  const size_t bytes = value.GetTensorSizeInBytes();
  t->set_raw_data(static_cast<const char*>(value.GetTensorRawData()), bytes);
  return Status::Ok();
}

Status CopyAttribute(Ort::ConstOpAttr attr, onnx::AttributeProto* a, const std::string& node) {
  a->set_name(attr.GetName());
  auto check = [&](Ort::Status s) -> Status {
    if (s.IsOK()) return Status::Ok();
    return InvalidGraph("node '" + node + "' attribute '" + a->name() +
                        "': " + s.GetErrorMessage());
  };
  switch (attr.GetType()) {
    case ORT_OP_ATTR_INT: {
      int64_t v = 0;
      if (auto s = check(attr.GetValue(v)); !s.ok()) return s;
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(v);
      return Status::Ok();
    }
    case ORT_OP_ATTR_INTS: {
      std::vector<int64_t> v;
      if (auto s = check(attr.GetValueArray(v)); !s.ok()) return s;
      a->set_type(onnx::AttributeProto::INTS);
      for (int64_t x : v) a->add_ints(x);
      return Status::Ok();
    }
    case ORT_OP_ATTR_FLOAT: {
      float v = 0;
      if (auto s = check(attr.GetValue(v)); !s.ok()) return s;
      a->set_type(onnx::AttributeProto::FLOAT);
      a->set_f(v);
      return Status::Ok();
    }
    case ORT_OP_ATTR_FLOATS: {
      std::vector<float> v;
      if (auto s = check(attr.GetValueArray(v)); !s.ok()) return s;
      a->set_type(onnx::AttributeProto::FLOATS);
      for (float x : v) a->add_floats(x);
      return Status::Ok();
    }
    case ORT_OP_ATTR_STRING: {
      std::string v;
      if (auto s = check(attr.GetValue(v)); !s.ok()) return s;
      a->set_type(onnx::AttributeProto::STRING);
      a->set_s(std::move(v));
      return Status::Ok();
    }
    case ORT_OP_ATTR_STRINGS: {
      std::vector<std::string> v;
      if (auto s = check(attr.GetValueArray(v)); !s.ok()) return s;
      a->set_type(onnx::AttributeProto::STRINGS);
      for (auto& x : v) a->add_strings(std::move(x));
      return Status::Ok();
    }
    case ORT_OP_ATTR_TENSOR: {
      Ort::Value v{nullptr};
      if (auto s = check(attr.GetTensorAttributeAsOrtValue(v)); !s.ok()) return s;
      a->set_type(onnx::AttributeProto::TENSOR);
      return FillTensorProto(v.GetConst(), "", a->mutable_t());
    }
    case ORT_OP_ATTR_GRAPH:
      return NotImplemented("node '" + node + "' has a subgraph attribute '" + a->name() +
                            "'; ortc's plugin does not take nodes with subgraphs");
    default:
      return NotImplemented("node '" + node + "' attribute '" + a->name() +
                            "' has a type ONNX Runtime's plugin API cannot read");
  }
}

}  // namespace

Result<onnx::NodeProto> NodeToProto(Ort::ConstNode node) {
  onnx::NodeProto n;
  n.set_name(node.GetName());
  n.set_op_type(node.GetOperatorType());
  n.set_domain(node.GetDomain());
  for (const auto& in : node.GetInputs()) n.add_input(in ? in.GetName() : std::string());
  for (const auto& out : node.GetOutputs()) n.add_output(out ? out.GetName() : std::string());
  for (const auto& attr : node.GetAttributes()) {
    if (auto s = CopyAttribute(attr, n.add_attribute(), n.name()); !s.ok()) return s;
  }
  return n;
}

Result<onnx::ModelProto> GraphToModelProto(Ort::ConstGraph graph,
                                           const GraphToProtoOptions& options) {
  onnx::ModelProto m;
  m.set_ir_version(graph.GetOnnxIRVersion());
  m.set_producer_name("onnxruntime");
  for (const auto& set : graph.GetOperatorSets()) {
    auto* op = m.add_opset_import();
    op->set_domain(set.domain);
    op->set_version(set.version);
  }
  auto* g = m.mutable_graph();
  g->set_name(graph.GetName());

  std::set<std::string> initializer_names;
  for (const auto& init : graph.GetInitializers()) {
    const std::string name = init.GetName();
    Ort::ConstValue value{nullptr};
    Ort::Status s = init.GetInitializer(value);
    if (!s.IsOK() || !value) {
      return InvalidGraph("initializer '" + name + "' could not be read through ONNX Runtime: " +
                          (s.IsOK() ? std::string("no value") : s.GetErrorMessage()));
    }
    if (auto st = FillTensorProto(value, name, g->add_initializer()); !st.ok()) return st;
    initializer_names.insert(name);
  }
  for (const auto& in : graph.GetInputs()) {
    if (initializer_names.count(in.GetName())) continue;  // IR < 4 lists initializers as inputs
    if (auto s = AddValueInfo(in, g->mutable_input()); !s.ok()) return s;
  }
  for (const auto& out : graph.GetOutputs()) {
    if (auto s = AddValueInfo(out, g->mutable_output()); !s.ok()) return s;
  }

  std::set<std::string> used_names;
  std::set<std::string> typed;  // values with a value_info (inputs, outputs, initializers)
  for (const auto& v : g->input()) typed.insert(v.name());
  for (const auto& v : g->output()) typed.insert(v.name());
  typed.insert(initializer_names.begin(), initializer_names.end());
  const auto nodes = graph.GetNodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto& node = nodes[i];
    std::string name = node.GetName();
    if (options.unique_node_names && (name.empty() || used_names.count(name)))
      name = "ortc_ep_node_" + std::to_string(i);
    used_names.insert(name);
    if (options.opaque_subgraph_nodes && !node.GetSubgraphs().empty()) {
      auto* n = g->add_node();
      n->set_name(name);
      n->set_op_type("OnnxRuntimeOnly");
      n->set_domain(kOpaqueDomain);
      for (const auto& in : node.GetInputs()) n->add_input(in ? in.GetName() : std::string());
      for (const auto& in : node.GetImplicitInputs()) n->add_input(in.GetName());
      for (const auto& out : node.GetOutputs()) n->add_output(out ? out.GetName() : std::string());
    } else {
      auto n = NodeToProto(node);
      if (!n.ok()) return n.status();
      n->set_name(name);
      *g->add_node() = std::move(n).value();
    }
    for (const auto& out : node.GetOutputs()) {
      // The types ONNX Runtime inferred help ortc's own shape inference.
      if (out && !typed.count(out.GetName())) {
        onnx::ValueInfoProto vi;
        vi.set_name(out.GetName());
        if (FillTensorType(out.TypeInfo(), vi.mutable_type(), vi.name()).ok()) {
          *g->add_value_info() = std::move(vi);
          typed.insert(out.GetName());
        }
      }
    }
  }
  return m;
}

}  // namespace ortc::ort_ep
