// The float reference the plugin's outputs are compared with, computed independently of the
// plugin's integer kernels: dequantize, compute in double, quantize with round-half-to-even (the
// floating-point environment's default rounding, not the plugin's own rounding code) and
// saturate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace npu_test {

struct Quant {
  double scale;
  int32_t zero;
  bool is_signed;
};

int32_t QuantizeRef(double real, const Quant& q);

// The 8-bit tensor bytes as integers.
std::vector<int32_t> Ints32(const std::string& bytes, bool is_signed);

struct ConvSpec {
  int64_t n, c, h, w, m, kh, kw;
  int64_t pads[4] = {0, 0, 0, 0};
  int64_t strides[2] = {1, 1};
  int64_t dilations[2] = {1, 1};
  int64_t oh() const {
    return (h + pads[0] + pads[2] - dilations[0] * (kh - 1) - 1) / strides[0] + 1;
  }
  int64_t ow() const {
    return (w + pads[1] + pads[3] - dilations[1] * (kw - 1) - 1) / strides[1] + 1;
  }
};

std::vector<int32_t> ConvRef(const ConvSpec& s, const std::vector<int32_t>& x, const Quant& qx,
                             const std::vector<int8_t>& w, double sw, const std::vector<int32_t>& b,
                             double sb, const Quant& qy);

std::vector<int32_t> MatMulRef(int64_t rows, int64_t k, int64_t cols, const std::vector<int32_t>& a,
                               const Quant& qa, const std::vector<int8_t>& b, double sb,
                               const Quant& qy);

}  // namespace npu_test
