#include "base/shape_json.h"

namespace ortc::tools {

nlohmann::json ShapeJson(const std::vector<int64_t>& dims, const std::vector<std::string>& symbols,
                         bool rank_known) {
  if (!rank_known) return nullptr;
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] >= 0)
      out.push_back(dims[i]);
    else if (i < symbols.size() && !symbols[i].empty())
      out.push_back(symbols[i]);
    else
      out.push_back(nullptr);
  }
  return out;
}

std::string ShapeText(const nlohmann::json& shape) {
  if (!shape.is_array()) return "?";
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    const auto& d = shape[i];
    s += d.is_number()   ? std::to_string(d.get<int64_t>())
         : d.is_string() ? d.get<std::string>()
                         : "?";
  }
  return s + "]";
}

}  // namespace ortc::tools
