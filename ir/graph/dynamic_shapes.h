// Why values still have dynamic shapes after --input-shape and shape folding: every value whose
// shape is not static, traced to its root causes (`ortc partition` prints them, grouped).
#pragma once

#include <string>
#include <vector>

#include "graph/model.h"

namespace ortc::graph {

// One root cause. A graph input whose shape is not fully fixed (its dims, or its rank, are
// unknown), or a node whose output shape cannot be computed at compile time although its
// inputs' shapes are known (a data-dependent output size; a shape-determining input that is not
// a compile-time constant; no shape rule for the op).
struct DynamicRoot {
  enum class Kind { kGraphInput, kNode };
  Kind kind = Kind::kGraphInput;
  std::string name;     // the graph input's or the node's name
  std::string op_type;  // kNode: the node's op ("" for a graph input)
  // Why, traced to the root: "dims 'batch', 'sequence' of graph input 'input_ids'" or "output
  // of NonZero node 'nz': data-dependent output size (NonZero)".
  std::string reason;
  // The command-line fix when there is one: "--input-shape input_ids=<batch>x<sequence>".
  std::string fix;
  std::vector<int> values;  // ids of the dynamic values it explains, in graph order
};

// A value whose shape is not static, with the roots it depends on.
struct DynamicValue {
  int value = -1;          // value id in Model::graph
  std::vector<int> roots;  // indices into DynamicShapeReport::roots, ascending
};

struct DynamicShapeReport {
  // Most values first (ties: first seen first).
  std::vector<DynamicRoot> roots;
  // Graph inputs, then node outputs in topological order.
  std::vector<DynamicValue> values;
};

// Traces every value of model.graph whose shape is not static to its root causes. A value
// inherits the roots of its producer's inputs with dynamic shapes and of the values its
// producer's shape-determining inputs (Reshape's shape, Expand's shape, Slice's starts...)
// were computed from; a producer whose inputs explain nothing is a root itself.
DynamicShapeReport ExplainDynamicShapes(const Model& model);

// The reason and fix of a root on one line: "<reason> (fix: <fix>)" or "<reason>".
std::string RootText(const DynamicRoot& root);

}  // namespace ortc::graph
