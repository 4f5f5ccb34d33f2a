// The test graphs: the QDQ Conv unit (with options that make each refusal case) and the QDQ
// MatMul unit, built on GraphBuilder with random data the reference can recompute.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph_builder.h"
#include "reference.h"

namespace npu_test {

// The QDQ Conv unit of the brief: x 1x2x5x5 int8, w 3x2x3x3, bias, pads 1, stride 1.
struct ConvGraph {
  GraphBuilder g;
  ConvSpec spec{1, 2, 5, 5, 3, 3, 3, {1, 1, 1, 1}};
  std::vector<int8_t> x, w;
  std::vector<int32_t> b;
  Quant qx{0.05, 3, true}, qy{0.5, -5, true};
  float sw = 0.02f, sb = 0.05f * 0.02f;
  int x_q = -1, y_q = -1, relu = -1;
  std::vector<int32_t> unit;  // node indices
};

struct ConvOptions {
  bool relu_beside = true;       // an unrelated float Relu
  bool relu_on_x = false;        // a Relu also reading the unit's dequantized activation
  std::vector<Attr> attrs;       // Conv attributes (default: pads 1, strides 1)
  bool per_channel_w = false;    // three weight scales
  bool dynamic_x = false;        // x with an unknown dim
  bool external_weight = false;  // w in a file
  std::string file;
};

// Fills `t` with a Conv unit (and the Relu nodes `o` asks for); writes `o.file` for external
// weights.
void BuildConv(ConvGraph& t, const ConvOptions& o);

// A QDQ MatMul unit a [rows, k] x b [k, cols]; returns the node indices.
struct MatMulUnit {
  std::vector<int8_t> b;
  float sb;
  Quant qa, qy;
  int a_q, y_q;
  std::vector<int32_t> nodes;
};

MatMulUnit AddMatMul(GraphBuilder& g, const std::string& tag, int a_q, Quant qa,
                     std::vector<int64_t> a_dims, int64_t cols, std::vector<int8_t> b, float sb,
                     Quant qy, bool y_zero_point, const std::string& external_file = "");

}  // namespace npu_test
