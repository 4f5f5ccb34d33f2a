// Host evaluation of single ONNX ops on constant tensors: the shape arithmetic exporters emit
// (Shape, Gather, Unsqueeze, Concat, Cast, Reshape...) and layout ops on weights (Transpose).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph.h"

namespace ortc::graph {

struct HostTensor {
  int32_t dtype = 0;
  std::vector<int64_t> dims;
  std::string bytes;  // row-major, little-endian

  int64_t elements() const;
};

// What the evaluator needs to know about one op; the attributes are borrowed.
struct HostOp {
  std::string_view op_type, domain;
  int since_version = 0;
  std::vector<const onnx::AttributeProto*> attributes;
  // Results above this size are declined before any of their memory is allocated: a shape
  // input of [60000, 50000] must not make the compiler build a 12 GB constant.
  int64_t max_output_bytes = 64ll << 20;
  // How many outputs the node has (ops such as Split or TopK are evaluated for all of them).
  size_t num_outputs = 1;

  const onnx::AttributeProto* Attr(std::string_view name) const;
  int64_t IntAttr(std::string_view name, int64_t fallback) const;
};

// Evaluates one op; nullopt when the op, its types or its attributes are not covered, the
// values are out of range or the result would exceed op.max_output_bytes (the op then stays in
// the graph). Never throws on odd inputs.
// Shape and Size read only `input_infos[0]` (which must be static); other ops need every
// input as a tensor in `inputs`.
std::optional<std::vector<HostTensor>> EvaluateHostOp(const HostOp& op,
                                                      const std::vector<const HostTensor*>& inputs,
                                                      const std::vector<TensorInfo>& input_infos);

// The ops EvaluateHostOp may fold (it can still decline a given instance).
bool HostEvaluable(std::string_view op_type);

}  // namespace ortc::graph
