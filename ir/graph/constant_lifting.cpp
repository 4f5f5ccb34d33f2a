// Constant -> initializer rewriting.
#include "graph/constant_lifting.h"

#include <optional>
#include <unordered_set>

#include "graph/opset_support.h"

namespace ortc::graph {
namespace {

// The tensor a Constant node defines, when it is a dense numeric one.
std::optional<onnx::TensorProto> ConstantTensor(const onnx::NodeProto& node) {
  if (node.attribute_size() != 1) return std::nullopt;
  const auto& a = node.attribute(0);
  onnx::TensorProto t;
  if (a.name() == "value" && a.has_t()) {
    if (a.t().data_type() == onnx::TensorProto::STRING) return std::nullopt;
    t = a.t();
  } else if (a.name() == "value_float") {
    t.set_data_type(onnx::TensorProto::FLOAT);
    t.add_float_data(a.f());
  } else if (a.name() == "value_floats") {
    t.set_data_type(onnx::TensorProto::FLOAT);
    t.add_dims(a.floats_size());
    for (float f : a.floats()) t.add_float_data(f);
  } else if (a.name() == "value_int") {
    t.set_data_type(onnx::TensorProto::INT64);
    t.add_int64_data(a.i());
  } else if (a.name() == "value_ints") {
    t.set_data_type(onnx::TensorProto::INT64);
    t.add_dims(a.ints_size());
    for (int64_t i : a.ints()) t.add_int64_data(i);
  } else {
    return std::nullopt;
  }
  return t;
}

}  // namespace

int LiftConstantsToInitializers(onnx::GraphProto* graph) {
  std::unordered_set<std::string> graph_outputs;
  for (const auto& o : graph->output()) graph_outputs.insert(o.name());
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  int lifted = 0;
  for (auto& node : *graph->mutable_node()) {
    const bool is_constant = node.op_type() == "Constant" && IsDefaultDomain(node.domain()) &&
                             node.output_size() == 1 && !node.output(0).empty() &&
                             !graph_outputs.count(node.output(0));
    std::optional<onnx::TensorProto> t = is_constant ? ConstantTensor(node) : std::nullopt;
    if (!t) {
      *kept.Add() = std::move(node);
      continue;
    }
    t->set_name(node.output(0));
    *graph->add_initializer() = std::move(*t);
    ++lifted;
  }
  graph->mutable_node()->Swap(&kept);
  return lifted;
}

}  // namespace ortc::graph
