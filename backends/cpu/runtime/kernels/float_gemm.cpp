// Float32 GEMM (oneDNN, then OpenBLAS) and float copies of tensors of other floating types.
#include "cpu/runtime/kernels/float_gemm.h"

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#include <cstring>

#include "cpu/runtime/kernels/kernel_util.h"

namespace ortc::exec {

void Sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  // oneDNN's GEMM: JIT kernels for this machine's ISA, threaded by the same OpenMP pool as the
  // convolutions (OpenBLAS would start a second pool of threads).
  if (dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) ==
      dnnl_success)
    return;
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
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
