// Fixing scalar graph inputs to values given at compile time.
#include "graph/input_values.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <set>

#include "base/element_types.h"
#include "graph/graph.h"

namespace ortc::graph {
namespace {

using T = onnx::TensorProto;

// The types --input-value can fix, by the name the error messages and the ctx model's record use.
std::string TypeName(int dtype) {
  const bool fixable = dtype == T::BOOL || dtype == T::INT32 || dtype == T::INT64 ||
                       dtype == T::FLOAT || dtype == T::DOUBLE;
  return fixable ? ElementTypeName(dtype) : "";
}

// Fills `t` (dtype already set) with the value `text`; false when it does not parse.
bool SetValue(const std::string& text, T* t) {
  const char* b = text.data();
  const char* e = b + text.size();
  switch (t->data_type()) {
    case T::BOOL: {
      if (text != "0" && text != "1" && text != "true" && text != "false") return false;
      const char v = (text == "1" || text == "true") ? 1 : 0;
      t->set_raw_data(std::string(1, v));
      return true;
    }
    case T::INT32: {
      int32_t v = 0;
      auto r = std::from_chars(b, e, v);
      if (r.ec != std::errc() || r.ptr != e) return false;
      t->set_raw_data(std::string(reinterpret_cast<const char*>(&v), sizeof v));
      return true;
    }
    case T::INT64: {
      int64_t v = 0;
      auto r = std::from_chars(b, e, v);
      if (r.ec != std::errc() || r.ptr != e) return false;
      t->set_raw_data(std::string(reinterpret_cast<const char*>(&v), sizeof v));
      return true;
    }
    case T::FLOAT:
    case T::DOUBLE: {
      double v = 0;
      auto r = std::from_chars(b, e, v);
      if (r.ec != std::errc() || r.ptr != e) return false;
      if (t->data_type() == T::FLOAT) {
        const float f = static_cast<float>(v);
        t->set_raw_data(std::string(reinterpret_cast<const char*>(&f), sizeof f));
      } else {
        t->set_raw_data(std::string(reinterpret_cast<const char*>(&v), sizeof v));
      }
      return true;
    }
    default:
      return false;
  }
}

}  // namespace

Status ParseInputValue(const std::string& text, InputValues* out) {
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string piece =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const size_t eq = piece.rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == piece.size())
      return InvalidArgument("--input-value '" + piece + "': expected name=value, e.g. sr=16000");
    const std::string name = piece.substr(0, eq);
    if (!out->emplace(name, piece.substr(eq + 1)).second)
      return InvalidArgument("--input-value names '" + name + "' twice");
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return Status::Ok();
}

Result<std::vector<FixedInput>> ApplyInputValues(const InputValues& values, onnx::GraphProto* graph,
                                                 std::set<std::string>* applied) {
  std::vector<FixedInput> fixed;
  std::set<std::string> initializers;
  for (const auto& t : graph->initializer()) initializers.insert(t.name());
  std::string known;
  for (const auto& in : graph->input()) {
    if (!initializers.count(in.name())) known += (known.empty() ? "" : ", ") + in.name();
  }
  for (const auto& [name, text] : values) {
    int position = -1;
    for (int i = 0; i < graph->input_size(); ++i) {
      if (graph->input(i).name() == name && !initializers.count(name)) position = i;
    }
    if (position < 0) {
      if (applied) continue;
      return InvalidArgument("--input-value names '" + name +
                             "', which is not an input of the model (inputs: " + known + ")");
    }
    if (applied) applied->insert(name);
    const onnx::ValueInfoProto decl = graph->input(position);
    if (!decl.type().has_tensor_type())
      return InvalidArgument("--input-value: input '" + name + "' is not a tensor");
    const auto& tt = decl.type().tensor_type();
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(tt.elem_type());
    if (TypeName(tt.elem_type()).empty())
      return InvalidArgument(
          "--input-value: input '" + name + "' is of a type (" + std::to_string(tt.elem_type()) +
          ") it cannot fix; it fixes bool, int32, int64, float and double inputs");
    for (const auto& d : tt.shape().dim()) {
      if (d.has_dim_value() && d.dim_value() == 1) {
        t.add_dims(1);
        continue;
      }
      if (!d.has_dim_value()) {
        t.add_dims(1);  // a symbolic dimension of a one-element input
        continue;
      }
      return InvalidArgument("--input-value: input '" + name +
                             "' holds more than one element; it fixes scalar inputs only");
    }
    if (!SetValue(text, &t))
      return InvalidArgument("--input-value " + name + "=" + text + ": not a " +
                             TypeName(tt.elem_type()) + " value (the input's type)");
    fixed.push_back({decl, position, TypeName(tt.elem_type()) + ":" + text});
    *graph->add_initializer() = std::move(t);
  }
  // Remove the fixed inputs from the graph's inputs, last position first.
  std::vector<int> positions;
  for (const auto& f : fixed) positions.push_back(f.position);
  std::sort(positions.rbegin(), positions.rend());
  for (int p : positions) graph->mutable_input()->DeleteSubrange(p, 1);
  return fixed;
}

std::string InputValuesMetadata(const std::vector<FixedInput>& fixed) {
  std::string text;
  for (const auto& f : fixed)
    text += (text.empty() ? "" : ";") + f.declaration.name() + "=" + f.value;
  return text;
}

}  // namespace ortc::graph
