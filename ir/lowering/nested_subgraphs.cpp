// Lowering of subgraph attributes into nested SubgraphIrs.
#include "lowering/nested_subgraphs.h"

#include <map>

#include "graph/graph_builder.h"
#include "graph/opset_support.h"

namespace ortc::lowering {
namespace {

graph::TensorInfo InfoOf(const onnx::TypeProto& type) {
  graph::TensorInfo info;
  graph::SetInfoFromType(type, &info);
  return info;
}

// The tensor a Constant node defines, as a TensorProto.
Result<onnx::TensorProto> ConstantValue(const onnx::NodeProto& node) {
  onnx::TensorProto t;
  for (const auto& a : node.attribute()) {
    if (a.name() == "value") return a.t();
    if (a.name() == "value_float") {
      t.set_data_type(onnx::TensorProto::FLOAT);
      t.add_float_data(a.f());
      return t;
    }
    if (a.name() == "value_floats") {
      t.set_data_type(onnx::TensorProto::FLOAT);
      t.add_dims(a.floats_size());
      for (float f : a.floats()) t.add_float_data(f);
      return t;
    }
    if (a.name() == "value_int") {
      t.set_data_type(onnx::TensorProto::INT64);
      t.add_int64_data(a.i());
      return t;
    }
    if (a.name() == "value_ints") {
      t.set_data_type(onnx::TensorProto::INT64);
      t.add_dims(a.ints_size());
      for (int64_t i : a.ints()) t.add_int64_data(i);
      return t;
    }
  }
  return NotImplemented("Constant node '" + node.name() +
                        "' inside a subgraph uses a form ortc does not store (sparse or string)");
}

class NestedBuilder {
 public:
  NestedBuilder(const std::map<std::string, int64_t>& opsets) : opsets_(opsets) {}

  // Lowers `g`; names it reads from enclosing scopes are returned in `captured`, in the order of
  // the nested IR's capture inputs.
  Result<SubgraphIr> Build(const onnx::GraphProto& g, std::vector<std::string>* captured) {
    ir_.name = g.name();
    for (const auto& vi : g.value_info()) types_[vi.name()] = &vi.type();
    for (const auto& vi : g.output()) types_[vi.name()] = &vi.type();
    for (const auto& in : g.input()) {
      const int v = Define(in.name(), ValueKind::kInput);
      ir_.values[v].info = InfoOf(in.type());
      ir_.inputs.push_back(v);
    }
    for (const auto& t : g.initializer()) ORTC_RETURN_IF_ERROR(AddWeight(t, t.name()));
    for (const auto& node : g.node()) {
      const std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
      if (node.op_type() == "Constant" && domain.empty()) {
        auto value = ConstantValue(node);
        if (!value.ok()) return value.status();
        ORTC_RETURN_IF_ERROR(AddWeight(*value, node.output(0)));
        continue;
      }
      IrOp op;
      op.name = node.name().empty() ? node.op_type() : node.name();
      op.op_type = node.op_type();
      op.domain = domain;
      auto opset = opsets_.find(domain);
      op.since_version =
          graph::ResolveOp(domain, op.op_type, opset == opsets_.end() ? 0 : opset->second)
              .since_version;
      for (const auto& in : node.input()) {
        auto v = Resolve(in);
        if (!v.ok()) return v.status();
        op.inputs.push_back(*v);
      }
      for (const auto& a : node.attribute()) {
        if (a.type() != onnx::AttributeProto::GRAPH) op.attributes.push_back(a);
      }
      ORTC_RETURN_IF_ERROR(LowerSubgraphAttributes(
          node, opsets_, [this](const std::string& name) { return Resolve(name); }, &op));
      for (const auto& out : node.output()) {
        if (out.empty()) {
          op.outputs.push_back(-1);
          continue;
        }
        const int v = Define(out, ValueKind::kIntermediate);
        if (auto it = types_.find(out); it != types_.end())
          ir_.values[v].info = InfoOf(*it->second);
        op.outputs.push_back(v);
      }
      ir_.ops.push_back(std::move(op));
    }
    for (const auto& out : g.output()) {
      auto v = Resolve(out.name());
      if (!v.ok()) return v.status();
      if (ir_.values[*v].kind == ValueKind::kIntermediate) ir_.values[*v].kind = ValueKind::kOutput;
      ir_.outputs.push_back(*v);
    }
    for (int v : capture_ids_) ir_.inputs.push_back(v);
    *captured = captured_;
    ir_.SortTopologically();
    return std::move(ir_);
  }

 private:
  int Define(const std::string& name, ValueKind kind) {
    IrValue v;
    v.name = name;
    v.kind = kind;
    ir_.values.push_back(std::move(v));
    const int id = static_cast<int>(ir_.values.size()) - 1;
    scope_[name] = id;
    return id;
  }

  // A name defined in this subgraph, or else a new capture of an enclosing scope's value.
  Result<int> Resolve(const std::string& name) {
    if (name.empty()) return -1;
    if (auto it = scope_.find(name); it != scope_.end()) return it->second;
    const int v = Define(name, ValueKind::kInput);
    captured_.push_back(name);
    capture_ids_.push_back(v);
    return v;
  }

  Status AddWeight(const onnx::TensorProto& t, const std::string& name) {
    if (t.data_location() == onnx::TensorProto::EXTERNAL)
      return NotImplemented("subgraph initializer '" + name +
                            "' keeps its data in an external file; ortc reads external data only "
                            "for the main graph's initializers");
    graph::Initializer init;
    init.name = name;
    init.dtype = t.data_type();
    init.dims.assign(t.dims().begin(), t.dims().end());
    init.proto = &t;
    auto bytes = InitializerBytes(init);
    if (!bytes.ok()) return bytes.status();
    const int v = Define(name, ValueKind::kWeight);
    ir_.values[v].info.dtype = t.data_type();
    ir_.values[v].info.shape.rank_known = true;
    for (int64_t d : t.dims()) ir_.values[v].info.shape.dims.push_back(graph::Dim{.value = d});
    ir_.values[v].bytes = std::move(bytes).value();
    return Status::Ok();
  }

  const std::map<std::string, int64_t>& opsets_;
  SubgraphIr ir_;
  std::map<std::string, int> scope_;
  std::map<std::string, const onnx::TypeProto*> types_;
  std::vector<std::string> captured_;
  std::vector<int> capture_ids_;
};

}  // namespace

Status LowerSubgraphAttributes(const onnx::NodeProto& node,
                               const std::map<std::string, int64_t>& opsets,
                               const OuterScope& outer, IrOp* op) {
  for (const auto& a : node.attribute()) {
    if (a.type() == onnx::AttributeProto::GRAPHS)
      return NotImplemented("node '" + node.name() + "' (" + node.op_type() +
                            ") has a list-of-graphs attribute, which no ONNX op ortc runs uses");
    if (a.type() != onnx::AttributeProto::GRAPH) continue;
    if (op->explicit_inputs < 0) op->explicit_inputs = static_cast<int>(op->inputs.size());
    std::vector<std::string> captured;
    auto ir = NestedBuilder(opsets).Build(a.g(), &captured);
    if (!ir.ok())
      return ir.status().WithContext("subgraph '" + a.name() + "' of node '" + node.name() + "'");
    IrSubgraph sub{a.name(), std::make_shared<SubgraphIr>(std::move(ir).value()), {}};
    for (const auto& name : captured) {
      auto v = outer(name);
      if (!v.ok()) return v.status();
      // Each outer value is passed once, however many subgraphs read it.
      int index = -1;
      for (size_t i = op->explicit_inputs; i < op->inputs.size(); ++i) {
        if (op->inputs[i] == *v) index = static_cast<int>(i);
      }
      if (index < 0) {
        index = static_cast<int>(op->inputs.size());
        op->inputs.push_back(*v);
      }
      sub.captures.push_back(index);
    }
    op->subgraphs.push_back(std::move(sub));
  }
  return Status::Ok();
}

}  // namespace ortc::lowering
