// Float32 GEMM (oneDNN, then OpenBLAS) and float copies of tensors of other floating types.
#include "cpu/runtime/kernels/float_gemm.h"

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cstring>
#include <mutex>

#include "cpu/runtime/kernels/kernel_util.h"
#include "cpu_kernel/intra_op_threads.h"

namespace ortc::exec {

void Sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  // oneDNN's GEMM: JIT kernels for this machine's ISA, threaded by the same OpenMP pool as the
  // convolutions (OpenBLAS would start a second pool of threads). Only as many threads as the
  // work is worth: a small GEMM split over two threads was measured slower than on one, and
  // bimodally so (a 16-token decoder: 0.13 or 0.38 ms a run at two threads, 0.10 ms at one).
  // Inside a parallel region (a batch of GEMMs spread over the threads) it runs on its thread.
  // A GEMM of a few rows (a decode step's) is bound by reading B, not by its multiply-adds: it
  // is counted as four rows, so a [1, 768] x [768, 768] step still reads B on two cores
  // (measured: a 125M-parameter decoder's step 22 ms at two threads, 25 ms with it on one).
  const double rows = static_cast<double>(std::max<int64_t>(m, 4));
  ScopedIntraOpThreads threads(ThreadsForWork(rows * static_cast<double>(n) * k));
  if (dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) ==
      dnnl_success)
    return;
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

void PrepareSgemm() {
  static std::once_flag once;
  std::call_once(once, [] {
    // On every thread the pool has: a run may use them all.
    float a[64] = {}, b[64] = {}, c[64] = {};
    dnnl_sgemm('N', 'N', 8, 8, 8, 1.f, a, 8, b, 8, 0.f, c, 8);
  });
}

// Float view of any floating tensor (converted copy for half types and double).
std::vector<float> AsFloats(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.elements()));
  if (t.dtype() == DataType::kFloat) {
    if (!v.empty()) std::memcpy(v.data(), t.raw(), v.size() * 4);  // empty: both may be null
  } else {
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = static_cast<float>(ElementAsDouble(t, static_cast<int64_t>(i)));
  }
  return v;
}

void StoreFloats(Tensor& t, const std::vector<float>& v) {
  if (t.dtype() == DataType::kFloat) {
    if (!v.empty()) std::memcpy(t.mutable_raw(), v.data(), v.size() * 4);
  } else {
    for (size_t i = 0; i < v.size(); ++i) SetElementFromDouble(t, static_cast<int64_t>(i), v[i]);
  }
}

}  // namespace ortc::exec
