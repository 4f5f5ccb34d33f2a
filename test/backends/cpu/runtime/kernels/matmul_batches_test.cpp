// MatMul over many small products (attention's per-head GEMMs): spread one GEMM per thread when
// each is too small to split, with the batch axes broadcast. Against a double-precision
// reference, and the same bits at one thread as at four.
#include <catch2/catch.hpp>

#include <cmath>
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
