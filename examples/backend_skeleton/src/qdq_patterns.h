// Which nodes the npu takes: QDQ units, found over the host's graph view. A unit is
//   x_q -DequantizeLinear-> x_f;  w_q (int8 constant) -DequantizeLinear-> w_f;
//   [Conv only: b_q (int32 constant) -DequantizeLinear-> b_f;]
//   y_f = Conv(x_f, w_f[, b_f]) or MatMul(x_f, w_f);  y_f -QuantizeLinear-> y_q
// with per-tensor scales, static shapes, and float values read by nothing outside the unit.
// get_capability answers every node from this analysis, and compile runs it again to find the
// units of its group: one matcher, so what is claimed is exactly what compiles.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ortc/ortc_backend_plugin.h>

#include "npu_program.h"

namespace npu {

struct QdqUnit {
  StepKind kind = StepKind::kConv;
  // Node indices of the view; b_dq is -1 without a bias.
  int32_t op_node = -1, x_dq = -1, w_dq = -1, b_dq = -1, q_node = -1;
  // Value indices: the quantized activation, weight, bias and output.
  int32_t x_value = -1, w_value = -1, b_value = -1, y_value = -1;
  int32_t x_dtype = 0, y_dtype = 0;  // kInt8 or kUint8
  std::vector<int64_t> x_dims, w_dims, y_dims;
  ConvGeometry conv;
  float sx = 1, sw = 1, sb = 0, sy = 1;
  int32_t zx = 0, zy = 0;
};

struct QdqAnalysis {
  std::vector<QdqUnit> units;                     // the units the npu takes
  std::vector<std::vector<uint32_t>> node_units;  // per node: the units it belongs to
  std::vector<std::string> refusals;              // per node: why not taken; "" when taken
};

// Analyses the whole view. False with *error when the view itself is malformed (an index out
// of range); node refusals are not errors.
bool AnalyzeQdq(const OrtcGraphView& view, QdqAnalysis* analysis, std::string* error);

}  // namespace npu
