// MatMulInt4, made by the compiler (backends/cpu/compile/int4_weights.h) from a MatMul whose
// weight it proved to be a 4-bit block dequantization (ONNX Runtime's MatMulNBits, as GenAI's
// int4 models write it): Y[..., N] = A[..., K] @ W with W[k, n] = (q - z) * s read from 4-bit
// values, never stored as float. Inputs: A (float), packed uint8 [N, K / 2], scales and zero
// points float [N, K / block]; attribute block_size. A decode step (a few rows) reads half a
// byte a weight instead of four, which is what bounds it; more rows dequantize column panels and
// go through the float GEMM.
#include <algorithm>
#include <vector>

#include "cpu/runtime/kernels/float_gemm.h"
#include "cpu/runtime/kernels/int4_rows.h"
#include "cpu/runtime/kernels/kernel_util.h"
#include "cpu/runtime/kernels/registry.h"
#include "cpu_kernel/intra_op_threads.h"

namespace ortc::exec {
namespace {

// Bytes of the float panel the many-rows path dequantizes at once, and its fewest columns. What
// matters is the columns each GEMM gets: oneDNN's sgemm over 64 columns took twice the time of
// 128 or more (64-row prefills: K 8192 x N 3072 22 ms against 10 ms, K 3072 x N 8192 21.6
// against 10.3, at one thread too), and 256 KiB panels of K = 768 (85 columns) cost 1.2x.
constexpr int64_t kPanelBytes = 2048 << 10;
constexpr int64_t kPanelMinColumns = 128;

// [begin, end) of part i of n split into parts pieces, each a multiple of 16 but the last.
std::pair<int64_t, int64_t> Part(int64_t n, int64_t parts, int64_t i) {
  const int64_t each = (n + parts - 1) / parts;
  const int64_t step = (each + 15) / 16 * 16;
  return {std::min(n, i * step), std::min(n, (i + 1) * step)};
}

Status MatMulInt4(KernelContext& c) {
  const Tensor& a = c.in(0);
  const Tensor& packed = c.in(1);
  const Tensor& scales = c.in(2);
  const Tensor& zeros = c.in(3);
  const int64_t block = c.op().Int("block_size", 0);
  if (a.dtype() != DataType::kFloat || packed.dtype() != DataType::kUint8 ||
      scales.dtype() != DataType::kFloat || zeros.dtype() != DataType::kFloat || a.rank() < 1 ||
      packed.rank() != 2 || scales.rank() != 2 || zeros.shape() != scales.shape())
    return c.Error(
        "MatMulInt4 takes float A, uint8 [N, K/2] weights, float [N, K/block] scales "
        "and zero points");
  const int64_t k = a.shape().back(), n = packed.shape()[0];
  if (block < 32 || block % 32 != 0 || k % block != 0 || packed.shape()[1] * 2 != k ||
      scales.shape()[0] != n || scales.shape()[1] != k / block)
    return c.Error("MatMulInt4 weights do not match A's K = " + std::to_string(k) +
                   " and block_size " + std::to_string(block));
  std::vector<int64_t> out_shape = a.shape();
  out_shape.back() = n;
  Tensor& y = c.Output(0, DataType::kFloat, out_shape);
  const int64_t m = k > 0 ? a.elements() / k : 0;
  if (m == 0 || n == 0) return Status::Ok();
  const Int4Weights w{packed.data<uint8_t>(), scales.data<float>(), zeros.data<float>(), k, block};
  const float* x = a.data<float>();
  float* out = y.mutable_data<float>();
  // A decode step's rows are bound by reading B, so a few rows count as four (as in Sgemm).
  const int threads = ThreadsForWork(static_cast<double>(std::max<int64_t>(m, 4)) * n * k);
  if (m <= kInt4DotMaxRows) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t t = 0; t < threads; ++t) {
      const auto [begin, end] = Part(n, threads, t);
      if (begin < end) Int4DotColumns(x, k, m, w, begin, end, out, n);
    }
    return Status::Ok();
  }
  // Many rows (a prefill): dequantize a panel of columns, multiply it in float, next panel;
  // each thread takes whole panels, with its GEMM on one thread.
  const int64_t panel_columns = std::max(kPanelMinColumns, kPanelBytes / (k * 4) / 16 * 16);
  const int64_t per_thread = (n + threads * panel_columns - 1) / (threads * panel_columns);
  const int64_t panels = threads * per_thread;
#pragma omp parallel num_threads(threads)
  {
    // Kept by each pool thread between calls: a fresh panel would be fresh pages to fault in.
    thread_local std::vector<float> panel;
#pragma omp for schedule(static)
    for (int64_t p = 0; p < panels; ++p) {
      const auto [begin, end] = Part(n, panels, p);
      if (begin >= end) continue;
      panel.resize(static_cast<size_t>((end - begin) * k));
      Int4DequantizeColumns(w, begin, end, panel.data());
      Sgemm(false, true, m, end - begin, k, 1.f, x, k, panel.data(), k, 0.f, out + begin, n);
    }
  }
  return Status::Ok();
}

}  // namespace

void RegisterInt4MatMulKernels(KernelTable& t) {
  t["MatMulInt4"] = MatMulInt4;
}

}  // namespace ortc::exec
