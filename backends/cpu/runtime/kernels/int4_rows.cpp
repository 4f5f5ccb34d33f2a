#include "cpu/runtime/kernels/int4_rows.h"

// Each loop exists once per instruction set (int4_rows_body.inc, compiled by
// int4_rows_<isa>.cpp with its flags); the first call picks the widest this CPU runs.
#define ORTC_DECLARE_INT4_ISA(ISA)                                                              \
  namespace ortc::exec::ISA {                                                                   \
  void Int4DotColumns(const float* a, int64_t lda, int64_t rows, const Int4Weights& w,          \
                      int64_t n_begin, int64_t n_end, float* y, int64_t ldy);                   \
  void Int4DequantizeColumns(const Int4Weights& w, int64_t n_begin, int64_t n_end, float* out); \
  }
ORTC_DECLARE_INT4_ISA(baseline)
#if defined(__x86_64__)
ORTC_DECLARE_INT4_ISA(avx2)
ORTC_DECLARE_INT4_ISA(avx512)
#endif

namespace ortc::exec {
namespace {

const Int4RowsVariant& Pick() {
  static const Int4RowsVariant chosen = RunnableInt4RowsVariants().front();
  return chosen;
}

}  // namespace

std::vector<Int4RowsVariant> RunnableInt4RowsVariants() {
  std::vector<Int4RowsVariant> variants;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    variants.push_back({"avx512", avx512::Int4DotColumns, avx512::Int4DequantizeColumns});
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    variants.push_back({"avx2", avx2::Int4DotColumns, avx2::Int4DequantizeColumns});
#endif
  variants.push_back({"baseline", baseline::Int4DotColumns, baseline::Int4DequantizeColumns});
  return variants;
}

void Int4DotColumns(const float* a, int64_t lda, int64_t rows, const Int4Weights& w,
                    int64_t n_begin, int64_t n_end, float* y, int64_t ldy) {
  Pick().dot(a, lda, rows, w, n_begin, n_end, y, ldy);
}

void Int4DequantizeColumns(const Int4Weights& w, int64_t n_begin, int64_t n_end, float* out) {
  Pick().dequantize(w, n_begin, n_end, out);
}

}  // namespace ortc::exec
