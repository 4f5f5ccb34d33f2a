// The shape rules of the two step kinds, and the limits on sizes. Shared by the matcher (which
// checks that the model's shapes agree with them) and the program reader (which checks that a
// blob's do), so a program that loads can never make a kernel index outside its buffers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace npu {

inline constexpr uint32_t kMaxRank = 8;
inline constexpr int64_t kMaxDim = (int64_t{1} << 31) - 1;
inline constexpr uint64_t kMaxElements = uint64_t{1} << 40;
inline constexpr int64_t kMaxWindow = int64_t{1} << 20;  // strides, pads, dilations

// A 2-D convolution's window: ONNX's strides, pads (top, left, bottom, right) and dilations.
struct ConvGeometry {
  int64_t strides[2] = {1, 1};
  int64_t pads[4] = {0, 0, 0, 0};
  int64_t dilations[2] = {1, 1};
};

// Every dim in [1, kMaxDim], rank <= kMaxRank, at most kMaxElements elements; *count receives
// the element count. False with *why otherwise.
bool CheckDims(const std::vector<int64_t>& dims, uint64_t* count, std::string* why);

// "[1,2,5,5]"
std::string DimsText(const std::vector<int64_t>& dims);

// y of Conv(x [N,C,H,W], w [M,C,KH,KW]) with group 1; false with *why when they do not fit.
bool ConvOutputDims(const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                    const ConvGeometry& g, std::vector<int64_t>* y, std::string* why);

// y of MatMul(a [..., M, K], b [K, N]) = [..., M, N]; false with *why when they do not fit.
bool MatMulOutputDims(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                      std::vector<int64_t>* y, std::string* why);

}  // namespace npu
