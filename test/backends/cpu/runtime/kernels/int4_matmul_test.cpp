// MatMulInt4 (4-bit block-quantized weights, int4_rows.h): the row loops of every compiled
// variant this CPU runs, and the kernel's two paths (a few rows dot the packed weights; many
// rows dequantize panels for the float GEMM), against a double-precision product of the
// weights dequantized as the graph would: (float(q) - z) * s in float.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "cpu/runtime/kernels/int4_rows.h"
#include "cpu_kernel/intra_op_threads.h"
#include "cpu_op.h"
#include "ortc/runtime.h"

using namespace ortc;

namespace {

// Weights of N columns of K 4-bit values with their blocks' scales and zero points, in the
// layout int4_rows.h reads, and the float weights they stand for.
struct Weights {
  int64_t k, n, block;
  std::vector<uint8_t> packed;
  std::vector<float> scales, zeros, dense;  // dense: [N, K], (q - z) * s

  exec::Int4Weights view() const { return {packed.data(), scales.data(), zeros.data(), k, block}; }
};

Weights MakeWeights(int64_t k, int64_t n, int64_t block, uint32_t seed) {
  Weights w{k, n, block, std::vector<uint8_t>(static_cast<size_t>(n * k / 2)), {}, {}, {}};
  uint32_t state = seed;
  auto next = [&] { return state = state * 1664525u + 1013904223u; };
  for (int64_t i = 0; i < n * (k / block); ++i) {
    w.scales.push_back(static_cast<float>(next() % 1000 + 1) / 40000.0f);
    w.zeros.push_back(static_cast<float>(next() % 16));
  }
  w.dense.resize(static_cast<size_t>(n * k));
  for (int64_t col = 0; col < n; ++col)
    for (int64_t row = 0; row < k; ++row) {
      const uint8_t q = (next() >> 13) & 15;
      const int64_t b = col * (k / block) + row / block;
      w.dense[col * k + row] = (static_cast<float>(q) - w.zeros[b]) * w.scales[b];
      const int64_t g = row / 32, j = row % 32;  // group g's byte j: value j low, j + 16 high
      w.packed[col * (k / 2) + g * 16 + j % 16] |= static_cast<uint8_t>(q << (j < 16 ? 0 : 4));
    }
  return w;
}

std::vector<float> Activations(int64_t count, uint32_t seed) {
  std::vector<float> a;
  for (int64_t i = 0; i < count; ++i)
    a.push_back(static_cast<float>(static_cast<int64_t>((i * 7919 + seed * 104729) % 2001) - 1000) /
                500.0f);
  return a;
}

// Worst |y - ref| / sum |a * w| over every output: the rounding of one float dot product.
double WorstError(const std::vector<float>& a, const Weights& w, int64_t rows, const float* y) {
  double worst = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t col = 0; col < w.n; ++col) {
      double want = 0, magnitude = 0;
      for (int64_t i = 0; i < w.k; ++i) {
        want += static_cast<double>(a[r * w.k + i]) * w.dense[col * w.k + i];
        magnitude += std::fabs(static_cast<double>(a[r * w.k + i]) * w.dense[col * w.k + i]);
      }
      worst = std::max(worst, std::fabs(y[r * w.n + col] - want) / std::max(magnitude, 1e-30));
    }
  return worst;
}

Tensor RunMatMulInt4(const Tensor& a, const Weights& w) {
  const Tensor packed = test::HostTensor(DataType::kUint8, {w.n, w.k / 2}, w.packed);
  const Tensor scales = test::HostTensor(DataType::kFloat, {w.n, w.k / w.block}, w.scales);
  const Tensor zeros = test::HostTensor(DataType::kFloat, {w.n, w.k / w.block}, w.zeros);
  return test::RunOp("MatMulInt4", 1, {&a, &packed, &scales, &zeros}, {{"block_size", w.block}})[0];
}

}  // namespace

TEST_CASE("int4 row loops of every variant give the dequantized product", "[kernels]") {
  const Weights w = MakeWeights(256, 40, 64, 3);
  const auto a = Activations(4 * w.k, 5);
  for (const auto& v : exec::RunnableInt4RowsVariants()) {
    INFO("variant " << v.isa);
    for (int64_t rows = 1; rows <= exec::kInt4DotMaxRows; ++rows) {
      INFO(rows << " row(s)");
      std::vector<float> y(static_cast<size_t>(rows * w.n), -1.0f);
      // Two column ranges, as two threads would take them.
      v.dot(a.data(), w.k, rows, w.view(), 0, 24, y.data(), w.n);
      v.dot(a.data(), w.k, rows, w.view(), 24, w.n, y.data(), w.n);
      CHECK(WorstError(a, w, rows, y.data()) < 1e-6);
    }
    std::vector<float> dense(static_cast<size_t>(10 * w.k), -1.0f);
    v.dequantize(w.view(), 7, 17, dense.data());
    bool same = true;
    for (int64_t col = 7; col < 17; ++col)
      for (int64_t i = 0; i < w.k; ++i)
        same = same && dense[(col - 7) * w.k + i] == w.dense[col * w.k + i];
    CHECK(same);  // exactly the graph's (q - z) * s
  }
}

TEST_CASE("MatMulInt4 gives the dequantized product for a decode row and for a prefill",
          "[kernels]") {
  // K 512: one panel per thread. K 8192: panels of the fewest columns (128), several per
  // thread, the last one short.
  for (const Weights& w : {MakeWeights(512, 300, 128, 11), MakeWeights(8192, 300, 64, 12)}) {
    const int before = exec::CurrentIntraOpThreads();
    for (int threads : {1, 2, 4}) {
      exec::UseIntraOpThreads(threads);
      for (int64_t rows : {1, 3, 4, 5, 37}) {  // 1-4: the dot loop; 5 and more: GEMM panels
        INFO("K " << w.k << ", " << threads << " thread(s), " << rows << " row(s)");
        const auto a = Activations(rows * w.k, static_cast<uint32_t>(rows));
        const Tensor x = test::HostTensor(DataType::kFloat, {1, rows, w.k}, a);
        const Tensor y = RunMatMulInt4(x, w);
        REQUIRE(y.shape() == std::vector<int64_t>{1, rows, w.n});
        CHECK(WorstError(a, w, rows, y.data<float>()) < 1e-6);
      }
    }
    exec::UseIntraOpThreads(before);
  }
}

TEST_CASE("MatMulInt4 refuses weights that do not fit A", "[kernels]") {
  const Weights w = MakeWeights(64, 8, 32, 1);
  const auto a = Activations(2 * 96, 1);
  const Tensor x = test::HostTensor(DataType::kFloat, {2, 96}, a);  // K 96, weights of K 64
  const Tensor packed = test::HostTensor(DataType::kUint8, {w.n, w.k / 2}, w.packed);
  const Tensor scales = test::HostTensor(DataType::kFloat, {w.n, w.k / w.block}, w.scales);
  const Tensor zeros = test::HostTensor(DataType::kFloat, {w.n, w.k / w.block}, w.zeros);
  onnx::NodeProto node;
  auto* attr = node.add_attribute();
  attr->set_name("block_size");
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(32);
  CpuOpCall call;
  call.op_type = "MatMulInt4";
  call.opset = 1;
  call.attributes = node.SerializeAsString();
  call.inputs = {&x, &packed, &scales, &zeros};
  const auto r = RunCpuOp(call);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("do not match A's K = 96"));
}
