// Reading and checking inputs fixed at compile time.
#include "loader/fixed_inputs.h"

#include <charconv>
#include <cstring>

namespace ortc::loader {
namespace {

constexpr const char* kKey = "ortc.input_values";

// The types the compiler fixes, by the names it records (DataTypeName's).
DataType TypeOf(const std::string& name) {
  for (DataType t :
       {DataType::kBool, DataType::kInt32, DataType::kInt64, DataType::kFloat, DataType::kDouble}) {
    if (DataTypeName(t) == name) return t;
  }
  return DataType::kUndefined;
}

double ValueOf(const Tensor& t) {
  switch (t.dtype()) {
    case DataType::kBool:
      return t.data<bool>()[0] ? 1 : 0;
    case DataType::kInt32:
      return t.data<int32_t>()[0];
    case DataType::kInt64:
      return static_cast<double>(t.data<int64_t>()[0]);
    case DataType::kFloat:
      return t.data<float>()[0];
    default:
      return t.data<double>()[0];
  }
}

}  // namespace

Result<std::map<std::string, FixedInput>> ReadFixedInputs(const onnx::ModelProto& model) {
  std::map<std::string, FixedInput> fixed;
  for (const auto& prop : model.metadata_props()) {
    if (prop.key() != kKey) continue;
    const std::string& text = prop.value();
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find(';', start);
      if (end == std::string::npos) end = text.size();
      const std::string item = text.substr(start, end - start);
      start = end + 1;
      const size_t eq = item.rfind('='), colon = item.rfind(':');
      if (eq == std::string::npos || colon == std::string::npos || colon < eq)
        return InvalidGraph("metadata " + std::string(kKey) + ": malformed entry '" + item + "'");
      FixedInput f;
      f.dtype = TypeOf(item.substr(eq + 1, colon - eq - 1));
      f.text = item.substr(colon + 1);
      std::string number = f.text == "true" ? "1" : f.text == "false" ? "0" : f.text;
      auto r = std::from_chars(number.data(), number.data() + number.size(), f.value);
      if (f.dtype == DataType::kUndefined || r.ec != std::errc() ||
          r.ptr != number.data() + number.size())
        return InvalidGraph("metadata " + std::string(kKey) + ": malformed entry '" + item + "'");
      fixed[item.substr(0, eq)] = f;
    }
  }
  return fixed;
}

Status CheckFixedInput(const std::string& name, const FixedInput& fixed, const Tensor& fed) {
  const std::string remedy = "; recompile with --input-value " + name +
                             "=<value> for that value, or without --input-value to keep it "
                             "variable";
  if (!fed.is_tensor() || fed.dtype() != fixed.dtype || fed.elements() != 1 || !fed.raw())
    return InvalidArgument("input '" + name + "' was fixed to " + fixed.text +
                           " at compile time (--input-value); the run must feed that one " +
                           DataTypeName(fixed.dtype) + " value" + remedy);
  if (ValueOf(fed) != fixed.value)
    return InvalidArgument("input '" + name + "' was fixed to " + fixed.text +
                           " at compile time (--input-value) but the run feeds another value" +
                           remedy);
  return Status::Ok();
}

}  // namespace ortc::loader
