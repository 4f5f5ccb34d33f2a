// Constant-mode Pad (the input's rows copied in runs, the rest filled): against the definition
// computed here element by element, with growing and cropping (negative) pads, the opset-18 axes
// input, and element types of 1, 2, 4 and 8 bytes.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "cpu_op.h"
#include "ortc/runtime.h"

using namespace ortc;
using ortc::test::HostTensor;
using ortc::test::RunOp;

namespace {

// y[i] = x[i - before] where that is inside x, else value; shapes [2, 3, 4] -> out_shape.
template <typename T>
std::vector<T> Expected(const std::vector<T>& x, const std::vector<int64_t>& xs,
                        const std::vector<int64_t>& before, const std::vector<int64_t>& out_shape,
                        T value) {
  std::vector<T> y;
  for (int64_t a = 0; a < out_shape[0]; ++a)
    for (int64_t b = 0; b < out_shape[1]; ++b)
      for (int64_t c = 0; c < out_shape[2]; ++c) {
        const int64_t i = a - before[0], j = b - before[1], k = c - before[2];
        const bool inside = i >= 0 && i < xs[0] && j >= 0 && j < xs[1] && k >= 0 && k < xs[2];
        y.push_back(inside ? x[(i * xs[1] + j) * xs[2] + k] : value);
      }
  return y;
}

template <typename T>
void Check(DataType dt, const std::vector<int64_t>& pads, T value) {
  std::vector<T> xv(24);
  for (int i = 0; i < 24; ++i) xv[i] = static_cast<T>(i + 1);
  const Tensor x = HostTensor<T>(dt, {2, 3, 4}, xv);
  const Tensor p = HostTensor<int64_t>(DataType::kInt64, {6}, pads);
  const Tensor v = HostTensor<T>(dt, {}, {value});
  const auto r = RunOp("Pad", 13, {&x, &p, &v});
  const std::vector<int64_t> before = {pads[0], pads[1], pads[2]};
  std::vector<int64_t> shape = {2 + pads[0] + pads[3], 3 + pads[1] + pads[4],
                                4 + pads[2] + pads[5]};
  REQUIRE(r[0].shape() == shape);
  const auto want = Expected<T>(xv, {2, 3, 4}, before, shape, value);
  CHECK(std::memcmp(r[0].raw(), want.data(), want.size() * sizeof(T)) == 0);
}

}  // namespace

TEST_CASE("constant Pad grows, crops and fills every element type", "[kernels]") {
  // a decode step's cache growth (one row at the end of an axis), both sides of every axis,
  // cropping on some axes while growing others, and a crop that leaves nothing of x
  Check<float>(DataType::kFloat, {0, 0, 0, 0, 1, 0}, 0.0f);
  Check<float>(DataType::kFloat, {1, 2, 3, 1, 0, 2}, -2.5f);
  Check<int64_t>(DataType::kInt64, {0, -1, 2, 1, -1, -2}, int64_t{7});
  Check<int32_t>(DataType::kInt32, {-1, 0, 0, 0, 0, 1}, -9);
  Check<uint16_t>(DataType::kUint16, {1, 1, 1, 1, 1, 1}, uint16_t{3});
  Check<int8_t>(DataType::kInt8, {0, -3, 0, 0, 1, 0}, int8_t{-4});
  // x copied as one block (pads on the first axis only, after or before it)
  Check<float>(DataType::kFloat, {0, 0, 0, 1, 0, 0}, 1.5f);
  Check<float>(DataType::kFloat, {2, 0, 0, 0, 0, 0}, 4.0f);
}

TEST_CASE("constant Pad over the axes input pads only those axes", "[kernels]") {
  std::vector<float> xv(24);
  for (int i = 0; i < 24; ++i) xv[i] = static_cast<float>(i);
  const Tensor x = HostTensor<float>(DataType::kFloat, {2, 3, 4}, xv);
  const Tensor pads =
      HostTensor<int64_t>(DataType::kInt64, {2}, {1, 2});  // axis -1: 1 before, 2 after
  const Tensor axes = HostTensor<int64_t>(DataType::kInt64, {1}, {-1});
  const auto r = RunOp("Pad", 18, {&x, &pads, nullptr, &axes});
  REQUIRE(r[0].shape() == std::vector<int64_t>{2, 3, 7});
  const auto want = Expected<float>(xv, {2, 3, 4}, {0, 0, 1}, {2, 3, 7}, 0.0f);
  CHECK(std::memcmp(r[0].raw(), want.data(), want.size() * sizeof(float)) == 0);
}
