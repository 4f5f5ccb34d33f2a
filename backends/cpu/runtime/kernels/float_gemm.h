// Float32 GEMM and float views of tensors, shared by the MatMul, Gemm and convolution kernels:
// they compute in float32 whatever floating type they are given.
#pragma once

#include <cstdint>
#include <vector>

#include "cpu_kernel/kernel_context.h"

namespace ortc::exec {

// C[m x n] = alpha * op(A) op(B) + beta * C, row-major float: oneDNN's GEMM (JIT kernels for this
// machine's ISA, on the OpenMP pool the convolutions use), OpenBLAS where oneDNN refuses.
void Sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// Does, once per process, what oneDNN's first GEMM call does before any GEMM (its kernels made
// for this CPU, its threads started): called when a program with GEMMs is loaded, so that the
// first run costs what the others do. Measured on the 2-core development machine: a first call
// took 20-30 ms at two threads (3 ms at one), the next ones their normal time.
void PrepareSgemm();

// Float copy of any floating tensor, and the way back into the tensor's own type.
std::vector<float> AsFloats(const Tensor& t);
void StoreFloats(Tensor& t, const std::vector<float>& v);

// Float views without copies when the tensor already holds float32.
struct FloatView {
  std::vector<float> copy;
  const float* data;
  explicit FloatView(const Tensor& t) {
    if (t.dtype() == DataType::kFloat) {
      data = t.data<float>();
    } else {
      copy = AsFloats(t);
      data = copy.data();
    }
  }
};

}  // namespace ortc::exec
