// MatMul over many small products (attention's per-head GEMMs): spread one GEMM per thread when
// each is too small to split, with the batch axes broadcast. Against a double-precision
// reference, and the same bits at one thread as at four.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "cpu_kernel/intra_op_threads.h"
#include "cpu_op.h"
#include "ortc/runtime.h"

using namespace ortc;

namespace {

Tensor Floats(std::vector<int64_t> shape, int seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(((i * 7919 + seed * 104729) % 2001) - 1000) / 1000.0f;
  return test::HostTensor<float>(DataType::kFloat, std::move(shape), v);
}

Tensor MatMul(const Tensor& a, const Tensor& b) {
  return test::RunOp("MatMul", 13, {&a, &b})[0];
}

}  // namespace

TEST_CASE("batched small MatMuls spread over threads give the reference and the same bits",
          "[kernels]") {
  // A [4, 4, 64, 64] times B [4, 64, 64] broadcast over A's first axis: 16 products of 262144
  // multiply-adds, each below what one thread's share must be (ThreadsForWork), together above.
  const Tensor a = Floats({4, 4, 64, 64}, 1);
  const Tensor b = Floats({4, 64, 64}, 2);
  const int before = exec::CurrentIntraOpThreads();
  exec::UseIntraOpThreads(4);
  const Tensor spread = MatMul(a, b);
  exec::UseIntraOpThreads(1);
  const Tensor serial = MatMul(a, b);
  exec::UseIntraOpThreads(before);
  REQUIRE(spread.shape() == std::vector<int64_t>{4, 4, 64, 64});
  double worst = 0;
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t h = 0; h < 4; ++h)
      for (int64_t r = 0; r < 64; ++r)
        for (int64_t c = 0; c < 64; ++c) {
          double want = 0;
          for (int64_t k = 0; k < 64; ++k)
            want += static_cast<double>(a.data<float>()[((i * 4 + h) * 64 + r) * 64 + k]) *
                    b.data<float>()[(h * 64 + k) * 64 + c];
          const int64_t at = ((i * 4 + h) * 64 + r) * 64 + c;
          worst = std::max(worst, std::fabs(spread.data<float>()[at] - want));
          CHECK(spread.data<float>()[at] == serial.data<float>()[at]);
        }
  CHECK(worst < 1e-4);
}

namespace {

// x [..., r, c] with its last two axes swapped.
Tensor SwapLastTwo(const Tensor& x) {
  const auto& s = x.shape();
  const int64_t rows = s[s.size() - 2], cols = s.back(), batches = x.elements() / (rows * cols);
  std::vector<float> v(static_cast<size_t>(x.elements()));
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        v[(b * cols + c) * rows + r] = x.data<float>()[(b * rows + r) * cols + c];
  std::vector<int64_t> shape = s;
  std::swap(shape[shape.size() - 2], shape.back());
  return test::HostTensor<float>(DataType::kFloat, shape, v);
}

Tensor AsInt32(const Tensor& x) {
  std::vector<int32_t> v;
  for (int64_t i = 0; i < x.elements(); ++i)
    v.push_back(static_cast<int32_t>(x.data<float>()[i] * 1000));
  return test::HostTensor<int32_t>(DataType::kInt32, x.shape(), v);
}

}  // namespace

TEST_CASE("MatMulTransposed reads either operand with its last two axes swapped", "[kernels]") {
  // The compiler's MatMulTransposed (cpu/compile/transposed_operands.h): the same product as
  // MatMul over the transposed copies, batched and broadcast ([2, 3, 5, 7] x [3, 7, 4]), in
  // float (Sgemm) and in int32 (the other types' loop).
  const Tensor a = Floats({2, 3, 5, 7}, 3);
  const Tensor b = Floats({3, 7, 4}, 4);
  const Tensor want = MatMul(a, b);
  const Tensor at = SwapLastTwo(a), bt = SwapLastTwo(b);
  for (auto [ta, tb] : {std::pair{1, 0}, std::pair{0, 1}, std::pair{1, 1}}) {
    INFO("trans_a " << ta << ", trans_b " << tb);
    const Tensor& x = ta ? at : a;
    const Tensor& y = tb ? bt : b;
    const Tensor got =
        test::RunOp("MatMulTransposed", 1, {&x, &y}, {{"trans_a", ta}, {"trans_b", tb}})[0];
    REQUIRE(got.shape() == want.shape());
    double worst = 0;
    for (int64_t i = 0; i < want.elements(); ++i)
      worst = std::max(worst, std::fabs(double{got.data<float>()[i]} - want.data<float>()[i]));
    CHECK(worst < 1e-5);
    const Tensor ai = AsInt32(a), bi = AsInt32(b), xi = AsInt32(x), yi = AsInt32(y);
    const Tensor wanti = test::RunOp("MatMul", 13, {&ai, &bi})[0];
    const Tensor goti =
        test::RunOp("MatMulTransposed", 1, {&xi, &yi}, {{"trans_a", ta}, {"trans_b", tb}})[0];
    REQUIRE(goti.shape() == wanti.shape());
    CHECK(std::memcmp(goti.raw(), wanti.raw(), static_cast<size_t>(wanti.elements()) * 4) == 0);
  }
}
