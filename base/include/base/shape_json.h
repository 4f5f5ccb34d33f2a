// Declared shapes in the --json reports (schemas/cli_reports.md): an array with a number for a
// known dimension, the symbol's name (a string) for a named dynamic one, null for an unknown
// one; null for an unknown rank. Tensors' actual shapes are arrays of numbers, the same form.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ortc::tools {

// dims: < 0 where unknown; symbols: the name of each dynamic dim ("" when none; may be shorter
// than dims).
nlohmann::json ShapeJson(const std::vector<int64_t>& dims, const std::vector<std::string>& symbols,
                         bool rank_known = true);

// The text form reports print: "[1,3,224,224]", "[batch,?]", "?".
std::string ShapeText(const nlohmann::json& shape);

}  // namespace ortc::tools
