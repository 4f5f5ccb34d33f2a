// The "dynamic shapes" section of `ortc partition`: values whose shape is still not static,
// grouped by root cause (graph/dynamic_shapes.h), as text and as JSON.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "graph/dynamic_shapes.h"

namespace ortc::partition {

// Adds "dynamic_roots" (each root with its value count) and "dynamic_values" (every value, its
// shape and reason, with indices into dynamic_roots) to `j`.
void AddDynamicShapesJson(const graph::Model& model, const graph::DynamicShapeReport& r,
                          nlohmann::json* j);
// Root causes first, each with its count and a few example values; "" when every shape is
// static.
std::string DynamicShapesText(const graph::Model& model, const graph::DynamicShapeReport& r);

}  // namespace ortc::partition
