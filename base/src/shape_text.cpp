// Parsing "name=1x3x224x224" shape options, shared by the compiler's --input-shape and the
// runtime tools' random inputs.
#include "base/shape_text.h"

#include <charconv>

#include "base/shape_limit.h"

namespace ortc::io {

namespace {

Status ParseOne(const std::string& text, std::map<std::string, std::vector<int64_t>>* out) {
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
  // The runtime's bound on one tensor: a shape past it would compile and then be refused by
  // every run.
  if (!exec::ShapeWithinLimit(dims))
    return InvalidArgument("--input-shape '" + text +
                           "' has more than 2^40 elements, the most "
                           "one tensor may have");
  if (!out->emplace(name, std::move(dims)).second)
    return InvalidArgument("--input-shape names input '" + name + "' twice");
  return Status::Ok();
}

}  // namespace

Status ParseInputShape(const std::string& text, std::map<std::string, std::vector<int64_t>>* out) {
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

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) text += ",";
    text += std::to_string(dims[i]);
  }
  return text + "]";
}

}  // namespace ortc::io
