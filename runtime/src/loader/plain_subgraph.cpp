// Plain ONNX nodes' attributes and subgraphs.
#include "loader/plain_subgraph.h"

#include "loader/tensor_proto.h"

namespace ortc::loader {
namespace {

namespace fs = std::filesystem;

Result<exec::Attribute> AttributeFromProto(const onnx::AttributeProto& a, const fs::path* dir) {
  exec::Attribute r;
  using A = onnx::AttributeProto;
  switch (a.type()) {
    case A::INT:
      r.kind = exec::Attribute::Kind::kInt;
      r.i = a.i();
      break;
    case A::FLOAT:
      r.kind = exec::Attribute::Kind::kFloat;
      r.f = a.f();
      break;
    case A::STRING:
      r.kind = exec::Attribute::Kind::kString;
      r.s = a.s();
      break;
    case A::INTS:
      r.kind = exec::Attribute::Kind::kInts;
      r.ints.assign(a.ints().begin(), a.ints().end());
      break;
    case A::FLOATS:
      r.kind = exec::Attribute::Kind::kFloats;
      r.floats.assign(a.floats().begin(), a.floats().end());
      break;
    case A::STRINGS:
      r.kind = exec::Attribute::Kind::kStrings;
      r.strings.assign(a.strings().begin(), a.strings().end());
      break;
    case A::TENSOR: {
      r.kind = exec::Attribute::Kind::kTensor;
      auto t = TensorFromProto(a.t(), dir);
      if (!t.ok()) return t.status();
      r.tensor = std::move(t).value();
      break;
    }
    default:
      return NotImplemented("attribute '" + a.name() + "' has an unsupported type");
  }
  return r;
}

// Loads one subgraph into an ExecGraph; names it reads from enclosing scopes become capture
// inputs after its own inputs, returned in `captured` in that order.
Result<std::shared_ptr<const exec::ExecGraph>> LoadSubgraph(
    const onnx::GraphProto& g, const fs::path* dir, const std::map<std::string, int64_t>& opsets,
    std::vector<std::string>* captured) {
  auto eg = std::make_shared<exec::ExecGraph>();
  std::vector<int> capture_ids;
  auto resolve = [&](const std::string& name) -> Result<int> {
    if (name.empty()) return -1;
    if (const int v = eg->FindValue(name); v >= 0) return v;
    const int v = eg->AddValue(name);
    captured->push_back(name);
    capture_ids.push_back(v);
    return v;
  };
  for (const auto& in : g.input()) eg->inputs.push_back(eg->AddValue(in.name()));
  for (const auto& t : g.initializer()) {
    auto tensor = TensorFromProto(t, dir);
    if (!tensor.ok()) return tensor.status().WithContext("initializer '" + t.name() + "'");
    eg->constants[eg->AddValue(t.name())] = std::move(tensor).value();
  }
  for (const auto& node : g.node()) {
    const std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
    if (node.op_type() == "Constant" && domain.empty()) {
      auto t = ConstantNodeValue(node, dir);
      if (!t.ok()) return t.status();
      if (node.output_size() != 1) return InvalidGraph("a Constant node needs one output");
      eg->constants[eg->AddValue(node.output(0))] = std::move(t).value();
      continue;
    }
    exec::ExecOp op;
    op.name = node.name().empty() ? node.op_type() : node.name();
    op.op_type = node.op_type();
    op.domain = domain;
    auto opset = opsets.find(domain);
    op.version = static_cast<int>(opset == opsets.end() ? 0 : opset->second);
    for (const auto& i : node.input()) {
      auto v = resolve(i);
      if (!v.ok()) return v.status();
      op.inputs.push_back(*v);
    }
    ORTC_RETURN_IF_ERROR(
        AddNodeAttributes(node, dir, opsets, resolve, &op).WithContext("node '" + op.name + "'"));
    for (const auto& o : node.output()) op.outputs.push_back(o.empty() ? -1 : eg->AddValue(o));
    eg->ops.push_back(std::move(op));
  }
  for (const auto& o : g.output()) {
    auto v = resolve(o.name());
    if (!v.ok()) return v.status();
    eg->outputs.push_back(*v);
    exec::ValueInfo info;
    info.name = o.name();
    if (o.type().has_tensor_type()) {
      info.dtype = static_cast<DataType>(o.type().tensor_type().elem_type());
      for (const auto& d : o.type().tensor_type().shape().dim())
        info.shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
    }
    eg->output_infos.push_back(info);
  }
  for (int v : capture_ids) eg->inputs.push_back(v);
  ORTC_RETURN_IF_ERROR(exec::BindKernels(eg.get()));
  return std::shared_ptr<const exec::ExecGraph>(std::move(eg));
}

}  // namespace

Result<Tensor> ConstantNodeValue(const onnx::NodeProto& node, const fs::path* dir) {
  for (const auto& a : node.attribute()) {
    auto attr = AttributeFromProto(a, dir);
    if (!attr.ok()) return attr.status();
    Tensor t;
    if (a.name() == "value") t = attr->tensor;
    if (a.name() == "value_float") t = Tensor::FromBytes(DataType::kFloat, {}, &attr->f, 4);
    if (a.name() == "value_int") t = Tensor::FromBytes(DataType::kInt64, {}, &attr->i, 8);
    if (a.name() == "value_floats")
      t = Tensor::FromBytes(DataType::kFloat, {static_cast<int64_t>(attr->floats.size())},
                            attr->floats.data(), attr->floats.size() * 4);
    if (a.name() == "value_ints")
      t = Tensor::FromBytes(DataType::kInt64, {static_cast<int64_t>(attr->ints.size())},
                            attr->ints.data(), attr->ints.size() * 8);
    if (a.name() == "value_string") {
      t = Tensor::Allocate(DataType::kString, {});
      t.mutable_strings()[0] = attr->s;
    }
    if (t.empty())
      return NotImplemented("Constant node '" + node.name() + "' uses attribute " + a.name());
    return t;
  }
  return InvalidGraph("Constant node '" + node.name() + "' has no value attribute");
}

Status AddNodeAttributes(const onnx::NodeProto& node, const fs::path* dir,
                         const std::map<std::string, int64_t>& opsets, const EnclosingScope& outer,
                         exec::ExecOp* op) {
  for (const auto& a : node.attribute()) {
    if (a.type() == onnx::AttributeProto::TYPE_PROTO) continue;  // inference-only (Optional)
    if (a.type() != onnx::AttributeProto::GRAPH) {
      auto attr = AttributeFromProto(a, dir);
      if (!attr.ok()) return attr.status();
      op->attrs[a.name()] = std::move(attr).value();
      continue;
    }
    if (op->explicit_inputs < 0) op->explicit_inputs = static_cast<int>(op->inputs.size());
    std::vector<std::string> captured;
    auto sub = LoadSubgraph(a.g(), dir, opsets, &captured);
    if (!sub.ok()) return sub.status().WithContext("subgraph '" + a.name() + "'");
    exec::Attribute attr;
    attr.kind = exec::Attribute::Kind::kGraph;
    attr.program = std::move(sub).value();
    for (const auto& name : captured) {
      auto v = outer(name);
      if (!v.ok()) return v.status();
      int index = -1;  // each outer value is passed once, however many subgraphs read it
      for (size_t i = op->explicit_inputs; i < op->inputs.size(); ++i) {
        if (op->inputs[i] == *v) index = static_cast<int>(i);
      }
      if (index < 0) {
        index = static_cast<int>(op->inputs.size());
        op->inputs.push_back(*v);
      }
      attr.captures.push_back(index);
    }
    op->attrs[a.name()] = std::move(attr);
  }
  return Status::Ok();
}

}  // namespace ortc::loader
