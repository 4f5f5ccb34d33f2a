// Parsing and applying --input-shape overrides (like ONNX Runtime's free-dimension overrides,
// but per input and for every dimension).
#include "graph/input_shapes.h"

#include "base/shape_text.h"

#include <charconv>
#include <set>

namespace ortc::graph {

Status ParseInputShape(const std::string& text, InputShapes* out) {
  return io::ParseInputShape(text, out);
}

Status ApplyInputShapes(const InputShapes& shapes, onnx::GraphProto* graph,
                        std::set<std::string>* applied) {
  std::set<std::string> initializers;
  for (const auto& t : graph->initializer()) initializers.insert(t.name());
  std::string known;
  for (const auto& in : graph->input()) {
    if (!initializers.count(in.name())) known += (known.empty() ? "" : ", ") + in.name();
  }
  for (const auto& [name, dims] : shapes) {
    onnx::ValueInfoProto* input = nullptr;
    for (auto& in : *graph->mutable_input()) {
      if (in.name() == name && !initializers.count(name)) input = &in;
    }
    if (!input && applied) continue;
    if (applied) applied->insert(name);
    if (!input) {
      return InvalidArgument("--input-shape names '" + name +
                             "', which is not an input of the model (inputs: " + known + ")");
    }
    if (!input->type().has_tensor_type()) {
      return InvalidArgument("--input-shape: input '" + name + "' is not a tensor");
    }
    // Read before mutable_shape(), which creates a shape and so makes has_shape() true.
    const bool declared = input->type().tensor_type().has_shape();
    auto* shape = input->mutable_type()->mutable_tensor_type()->mutable_shape();
    if (declared && shape->dim_size() != static_cast<int>(dims.size())) {
      return InvalidArgument("--input-shape gives input '" + name + "' rank " +
                             std::to_string(dims.size()) + " but the model declares rank " +
                             std::to_string(shape->dim_size()));
    }
    if (shape->dim_size() == 0) {
      for (size_t i = 0; i < dims.size(); ++i) shape->add_dim();
    }
    for (int i = 0; i < shape->dim_size(); ++i) {
      auto* dim = shape->mutable_dim(i);
      if (dim->has_dim_value() && dim->dim_value() != dims[i]) {
        return InvalidArgument("--input-shape gives input '" + name + "' dim " + std::to_string(i) +
                               " = " + std::to_string(dims[i]) + " but the model fixes it to " +
                               std::to_string(dim->dim_value()));
      }
      dim->set_dim_value(dims[i]);  // replaces dim_param (oneof)
    }
  }
  return Status::Ok();
}

}  // namespace ortc::graph
