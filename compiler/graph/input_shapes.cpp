// Parsing and applying --input-shape overrides (like ONNX Runtime's free-dimension overrides,
// but per input and for every dimension).
#include "graph/input_shapes.h"

#include <charconv>
#include <set>

namespace ortc::graph {

namespace {

Status ParseOne(const std::string& text, InputShapes* out) {
  const size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    return InvalidArgument("--input-shape '" + text + "' is not of the form name=1x3x224x224");
  }
  const std::string name = text.substr(0, eq);
  std::vector<int64_t> dims;
  size_t at = eq + 1;
  while (at <= text.size()) {
    size_t end = text.find('x', at);
    if (end == std::string::npos) end = text.size();
    int64_t d = 0;
    const char* first = text.data() + at;
    const char* last = text.data() + end;
    auto [ptr, ec] = std::from_chars(first, last, d);
    if (ec != std::errc() || ptr != last || d < 1) {
      return InvalidArgument("--input-shape '" + text + "': '" + std::string(first, last) +
                             "' is not a dimension (positive integer)");
    }
    dims.push_back(d);
    at = end + 1;
  }
  if (!out->emplace(name, std::move(dims)).second)
    return InvalidArgument("--input-shape names input '" + name + "' twice");
  return Status::Ok();
}

}  // namespace

Status ParseInputShape(const std::string& text, InputShapes* out) {
  // "ids=1x128,mask=1x128" (trtexec's --shapes style) is two overrides; a comma without an '='
  // after it is part of a name.
  std::vector<std::string> parts;
  size_t at = 0;
  while (true) {
    const size_t comma = text.find(',', at);
    parts.push_back(text.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  bool each_has_shape = parts.size() > 1;
  for (const auto& p : parts) each_has_shape = each_has_shape && p.find('=') != std::string::npos;
  if (!each_has_shape) return ParseOne(text, out);
  for (const auto& p : parts) ORTC_RETURN_IF_ERROR(ParseOne(p, out));
  return Status::Ok();
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
    auto* shape = input->mutable_type()->mutable_tensor_type()->mutable_shape();
    if (input->type().tensor_type().has_shape() &&
        shape->dim_size() != static_cast<int>(dims.size())) {
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
