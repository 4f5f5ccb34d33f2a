#include "cpu/runtime/kernels/vector_math.h"

// Each function exists once per instruction set (vector_math_body.inc, compiled by
// vector_math_<isa>.cpp with its flags); the first call picks the widest this CPU runs.
#define ORTC_DECLARE_VECTOR_ISA(ISA)                                     \
  namespace ortc::exec::ISA {                                            \
  void ExpArray(const float* x, float* y, int64_t n);                    \
  void SigmoidArray(const float* x, float* y, int64_t n);                \
  void TanhArray(const float* x, float* y, int64_t n);                   \
  void ErfArray(const float* x, float* y, int64_t n);                    \
  void GeluArray(const float* x, float* y, int64_t n, bool tanh_approx); \
  void SoftmaxRow(const float* x, float* y, int64_t n);                  \
  }
ORTC_DECLARE_VECTOR_ISA(baseline)
#if defined(__x86_64__)
ORTC_DECLARE_VECTOR_ISA(avx2)
ORTC_DECLARE_VECTOR_ISA(avx512)
#endif

namespace ortc::exec {
namespace {

const VectorMathVariant& Pick() {
  static const VectorMathVariant table = RunnableVectorMathVariants().front();
  return table;
}

}  // namespace

std::vector<VectorMathVariant> RunnableVectorMathVariants() {
  std::vector<VectorMathVariant> variants;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    variants.push_back({"avx512", avx512::ExpArray, avx512::SigmoidArray, avx512::TanhArray,
                        avx512::ErfArray, avx512::GeluArray, avx512::SoftmaxRow});
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    variants.push_back({"avx2", avx2::ExpArray, avx2::SigmoidArray, avx2::TanhArray, avx2::ErfArray,
                        avx2::GeluArray, avx2::SoftmaxRow});
  }
#endif
  variants.push_back({"baseline", baseline::ExpArray, baseline::SigmoidArray, baseline::TanhArray,
                      baseline::ErfArray, baseline::GeluArray, baseline::SoftmaxRow});
  return variants;
}

void ExpArray(const float* x, float* y, int64_t n) {
  Pick().exp(x, y, n);
}
void SigmoidArray(const float* x, float* y, int64_t n) {
  Pick().sigmoid(x, y, n);
}
void TanhArray(const float* x, float* y, int64_t n) {
  Pick().tanh(x, y, n);
}
void ErfArray(const float* x, float* y, int64_t n) {
  Pick().erf(x, y, n);
}
void GeluArray(const float* x, float* y, int64_t n, bool tanh_approx) {
  Pick().gelu(x, y, n, tanh_approx);
}

void SoftmaxRow(const float* x, float* y, int64_t n) {
  Pick().softmax_row(x, y, n);
}

}  // namespace ortc::exec
