// Float transcendental functions over arrays, written so the compiler vectorises them: no
// library calls and no branches in the loop bodies (selects instead), each array function built
// for AVX-512, AVX2+FMA and the baseline and picked at load time. glibc's expf/erff/tanhf are
// scalar calls, and the exporters' transformer graphs spend much of their non-GEMM time in
// them (erf GELU, SiLU's Sigmoid, Softmax's exp).
//
// Accuracy, measured against double-precision references over the whole float range
// (test/backends/cpu/runtime/kernels/vector_math_test.cpp): exp and sigmoid within 2 ulp,
// tanh within 3e-7 relative, erf within 1.6e-7 absolute (a few ulp where |erf| is near 1, and
// 1e-9 relative near 0). NaN stays NaN; infinities give the functions' limits.
#pragma once

#include <cstdint>
#include <vector>

namespace ortc::exec {

void ExpArray(const float* x, float* y, int64_t n);
void SigmoidArray(const float* x, float* y, int64_t n);
void TanhArray(const float* x, float* y, int64_t n);
void ErfArray(const float* x, float* y, int64_t n);
// GELU: x * 0.5 * (1 + erf(x / sqrt 2)), or with tanh_approx the tanh form
// x * 0.5 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))).
void GeluArray(const float* x, float* y, int64_t n, bool tanh_approx);
// Softmax of one row: exp(x - max(x)) / sum, the sum in double; all NaN if x holds a NaN.
void SoftmaxRow(const float* x, float* y, int64_t n);

// The compiled variants this CPU can run, widest first (the one the functions above use): so
// tests check every variant a machine might pick, not only this machine's.
struct VectorMathVariant {
  const char* isa;  // "avx512", "avx2", "baseline"
  void (*exp)(const float*, float*, int64_t);
  void (*sigmoid)(const float*, float*, int64_t);
  void (*tanh)(const float*, float*, int64_t);
  void (*erf)(const float*, float*, int64_t);
  void (*gelu)(const float*, float*, int64_t, bool);
  void (*softmax_row)(const float*, float*, int64_t);
};
std::vector<VectorMathVariant> RunnableVectorMathVariants();

}  // namespace ortc::exec
