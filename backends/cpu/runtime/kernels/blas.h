// Row-major GEMM through OpenBLAS for float and double, overloaded so that kernels templated on
// the element type call one name: C[m x n] = alpha * op(A) op(B) + beta * C.
#pragma once

#include <cblas.h>

#include <cstdint>

namespace ortc::exec {

namespace blas_detail {
// BLAS leaves C untouched for k == 0 in some builds; the product is empty, so C = beta * C.
template <typename T>
void ScaleOnly(int64_t m, int64_t n, T beta, T* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
}
}  // namespace blas_detail

inline void BlasGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                     int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) return blas_detail::ScaleOnly(m, n, beta, c, ldc);
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

inline void BlasGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha,
                     const double* a, int64_t lda, const double* b, int64_t ldb, double beta,
                     double* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) return blas_detail::ScaleOnly(m, n, beta, c, ldc);
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

}  // namespace ortc::exec
