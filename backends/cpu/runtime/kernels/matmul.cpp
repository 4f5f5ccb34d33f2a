// MatMul (batched, broadcast; and the compiler's MatMulTransposed) and Gemm: float32 through
// Sgemm, other types in double.
#include "cpu/runtime/kernels/float_gemm.h"
#include "cpu/runtime/kernels/kernel_util.h"
#include "cpu/runtime/kernels/registry.h"
#include "cpu_kernel/intra_op_threads.h"

namespace ortc::exec {
namespace {

// MatMul, and the compiler's MatMulTransposed (backends/cpu/compile/transposed_operands.h): the
// same product with attributes trans_a / trans_b saying an operand arrives with its last two
// axes swapped ([..., K, M] for A, [..., N, K] for B), read so by the GEMM instead of being
// transposed into a copy first.
Status MatrixProduct(KernelContext& c, bool ta, bool tb) {
  const Tensor& a = c.in(0);
  const Tensor& b = c.in(1);
  if (a.rank() == 0 || b.rank() == 0) return c.Error("MatMul inputs must have rank >= 1");
  if ((ta && a.rank() < 2) || (tb && b.rank() < 2))
    return c.Error("MatMulTransposed operands read transposed must have rank >= 2");
  std::vector<int64_t> as = a.shape(), bs = b.shape();
  const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  if (ta) std::swap(as[as.size() - 2], as.back());  // the logical [..., M, K]
  if (tb) std::swap(bs[bs.size() - 2], bs.back());  // the logical [..., K, N]
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  if (bs[bs.size() - 2] != k) return c.Error("MatMul inner dimensions differ");
  auto batch = BroadcastShape({std::vector<int64_t>(as.begin(), as.end() - 2),
                               std::vector<int64_t>(bs.begin(), bs.end() - 2)});
  if (!batch) return c.Error("MatMul batch dimensions cannot be broadcast");
  std::vector<int64_t> out = *batch;
  if (!a_vec) out.push_back(m);
  if (!b_vec) out.push_back(n);
  Tensor& y = c.Output(0, a.dtype(), out);
  const auto sa = BroadcastStrides(std::vector<int64_t>(as.begin(), as.end() - 2), *batch);
  const auto sb = BroadcastStrides(std::vector<int64_t>(bs.begin(), bs.end() - 2), *batch);
  const int64_t batches = Product(*batch);
  const int64_t lda = ta ? m : k, ldb = tb ? k : n;
  if (a.dtype() == DataType::kFloat && b.dtype() == DataType::kFloat) {
    const double each = static_cast<double>(m) * n * k;
    if (batches > 1 && ThreadsForWork(each) == 1 && ThreadsForWork(each * batches) > 1) {
      // Many small GEMMs (attention's per-head products): one whole GEMM per thread at a time
      // instead of each split over every thread.
      const auto& shape = *batch;
      const int threads = ThreadsForWork(each * batches);
#pragma omp parallel for num_threads(threads) schedule(static)
      for (int64_t i = 0; i < batches; ++i) {
        int64_t rem = i, oa = 0, ob = 0;
        for (size_t d = shape.size(); d-- > 0;) {
          const int64_t coord = rem % shape[d];
          rem /= shape[d];
          oa += coord * sa[d];
          ob += coord * sb[d];
        }
        Sgemm(ta, tb, m, n, k, 1.f, a.data<float>() + oa * m * k, lda, b.data<float>() + ob * k * n,
              ldb, 0.f, y.mutable_data<float>() + i * m * n, n);
      }
      return Status::Ok();
    }
    ForEachBroadcast(*batch, {sa, sb}, [&](int64_t i, const std::vector<int64_t>& o) {
      Sgemm(ta, tb, m, n, k, 1.f, a.data<float>() + o[0] * m * k, lda,
            b.data<float>() + o[1] * k * n, ldb, 0.f, y.mutable_data<float>() + i * m * n, n);
    });
    return Status::Ok();
  }
  ForEachBroadcast(*batch, {sa, sb}, [&](int64_t i, const std::vector<int64_t>& o) {
    for (int64_t r = 0; r < m; ++r)
      for (int64_t col = 0; col < n; ++col) {
        double acc = 0;
        for (int64_t j = 0; j < k; ++j)
          acc += ElementAsDouble(a, o[0] * m * k + (ta ? j * m + r : r * k + j)) *
                 ElementAsDouble(b, o[1] * k * n + (tb ? col * k + j : j * n + col));
        SetElementFromDouble(y, i * m * n + r * n + col, acc);
      }
  });
  return Status::Ok();
}

Status MatMul(KernelContext& c) {
  return MatrixProduct(c, false, false);
}

Status MatMulTransposed(KernelContext& c) {
  return MatrixProduct(c, c.op().Int("trans_a", 0) != 0, c.op().Int("trans_b", 0) != 0);
}

Status Gemm(KernelContext& c) {
  const Tensor& a = c.in(0);
  const Tensor& b = c.in(1);
  const bool ta = c.op().Int("transA", 0) != 0, tb = c.op().Int("transB", 0) != 0;
  const float alpha = c.op().Float("alpha", 1.f), beta = c.op().Float("beta", 1.f);
  if (a.rank() != 2 || b.rank() != 2) return c.Error("Gemm inputs must be 2-D");
  const int64_t m = ta ? a.shape()[1] : a.shape()[0], k = ta ? a.shape()[0] : a.shape()[1];
  const int64_t n = tb ? b.shape()[0] : b.shape()[1];
  if ((tb ? b.shape()[1] : b.shape()[0]) != k) return c.Error("Gemm inner dimensions differ");
  Tensor& y = c.Output(0, a.dtype(), {m, n});
  std::vector<float> out(static_cast<size_t>(m * n), 0.f);
  if (c.has_input(2) && beta != 0.f) {
    const Tensor& bias = c.in(2);
    auto shape = BroadcastShape({bias.shape(), {m, n}});
    if (!shape || *shape != std::vector<int64_t>{m, n})
      return c.Error("Gemm bias cannot be broadcast to the output");
    const auto cf = AsFloats(bias);
    ForEachBroadcast({m, n}, {BroadcastStrides(bias.shape(), {m, n})},
                     [&](int64_t i, const std::vector<int64_t>& o) { out[i] = cf[o[0]]; });
  }
  const FloatView af(a), bf(b);
  Sgemm(ta, tb, m, n, k, alpha, af.data, a.shape()[1], bf.data, b.shape()[1], beta, out.data(), n);
  StoreFloats(y, out);
  return Status::Ok();
}

}  // namespace

void RegisterMatMulKernels(KernelTable& t) {
  t["MatMul"] = MatMul;
  t["MatMulTransposed"] = MatMulTransposed;
  t["Gemm"] = Gemm;
}

}  // namespace ortc::exec
