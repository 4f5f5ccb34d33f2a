// "name=1x3x224x224" as `--input-shape` takes it (compile, verify, run).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ortc/status.h"

namespace ortc::io {

// Parses "name=1x3x224x224" (dims >= 1, separated by 'x') into `out`, or a comma-separated
// list of them ("ids=1x128,mask=1x128"; a comma is part of a name unless every piece has an
// '='); a name given twice is an error.
Status ParseInputShape(const std::string& text, std::map<std::string, std::vector<int64_t>>* out);

// "[2,3]": a shape in messages.
std::string DimsText(const std::vector<int64_t>& dims);

}  // namespace ortc::io
