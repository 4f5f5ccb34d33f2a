// The "device" of the skeleton: int8 Conv and MatMul run on the host with the integer
// arithmetic an NPU uses (int8 x int8 products summed in an integer accumulator, then one
// requantization to the output's scale). A real backend replaces these with the driver's
// submit and wait; they are written for clarity, not speed.
#pragma once

#include <cstdint>

#include "shapes.h"

namespace npu {

// The quantization of one step: activation, weight, bias and output scales, zero points, and
// whether the activation and output are int8 (true) or uint8 (false).
struct StepQuant {
  double sx = 1, sw = 1, sb = 0, sy = 1;
  int32_t zx = 0, zy = 0;
  bool x_signed = true, y_signed = true;
};

struct ConvShape {
  int64_t n = 1, c = 1, h = 1, w = 1;  // input NCHW
  int64_t m = 1, kh = 1, kw = 1;       // weight [M, C, KH, KW]
  int64_t oh = 1, ow = 1;              // output [N, M, OH, OW]
  ConvGeometry g;
};

// y[n,m,oh,ow] = requant(sum over c,kh,kw of (x - zx) * w + bias[m]); bias may be null.
void ConvQdq(const ConvShape& s, const StepQuant& q, const void* x, const int8_t* w,
             const int32_t* bias, void* y);

struct MatMulShape {
  int64_t batch = 1, m = 1, k = 1, n = 1;  // a [batch, M, K] x b [K, N] -> [batch, M, N]
};

void MatMulQdq(const MatMulShape& s, const StepQuant& q, const void* a, const int8_t* b, void* y);

// One output element: round_half_to_even((acc * sx * sw + bias * sb) / sy) + zy, saturated to
// the output type.
int32_t Requantize(int64_t acc, int64_t bias, const StepQuant& q);

}  // namespace npu
