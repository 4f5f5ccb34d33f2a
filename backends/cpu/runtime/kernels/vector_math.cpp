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
  }
ORTC_DECLARE_VECTOR_ISA(baseline)
#if defined(__x86_64__)
ORTC_DECLARE_VECTOR_ISA(avx2)
ORTC_DECLARE_VECTOR_ISA(avx512)
#endif

namespace ortc::exec {
namespace {

struct VectorMath {
  void (*exp)(const float*, float*, int64_t);
  void (*sigmoid)(const float*, float*, int64_t);
  void (*tanh)(const float*, float*, int64_t);
  void (*erf)(const float*, float*, int64_t);
  void (*gelu)(const float*, float*, int64_t, bool);
};

#define ORTC_VECTOR_TABLE(ISA)                                                      \
  VectorMath {                                                                      \
    ISA::ExpArray, ISA::SigmoidArray, ISA::TanhArray, ISA::ErfArray, ISA::GeluArray \
  }

const VectorMath& Pick() {
  static const VectorMath table = [] {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return ORTC_VECTOR_TABLE(avx512);
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      return ORTC_VECTOR_TABLE(avx2);
#endif
    return ORTC_VECTOR_TABLE(baseline);
  }();
  return table;
}

}  // namespace

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

}  // namespace ortc::exec
