// The inner loops of MatMulInt4 (the compiler's matrix product over 4-bit block-quantized
// weights, int4_matmul.cpp), built for AVX-512, AVX2+FMA and the baseline like vector_math.h's
// functions and picked at load time.
//
// Weights: row n of W^T (one output column) is K 4-bit values q in [0, 15], stored two a byte in
// groups of 32: byte j of a group holds value j in its low nibble and value j + 16 in its high
// nibble, so one 16-byte load unpacks into two runs of 16 consecutive values. Each block of
// `block` values along K (a multiple of 32) has a float scale s and zero point z; the weight is
// (q - z) * s, computed in float exactly as the dequantized graph computed it.
#pragma once

#include <cstdint>
#include <vector>

namespace ortc::exec {

// What the loops read: packed [N, K / 2] bytes, scales and zeros [N, K / block] floats.
struct Int4Weights {
  const uint8_t* packed;
  const float* scales;
  const float* zeros;
  int64_t k, block;
};

// The most rows of A Int4DotColumns takes at once (a decode step has one).
inline constexpr int64_t kInt4DotMaxRows = 4;

// y[r * ldy + n] = sum_k a[r * lda + k] * w(k, n) for r < rows (1..kInt4DotMaxRows) and n in
// [n_begin, n_end): the weights are read once for all rows, never widened to float in memory.
void Int4DotColumns(const float* a, int64_t lda, int64_t rows, const Int4Weights& w,
                    int64_t n_begin, int64_t n_end, float* y, int64_t ldy);

// out[(n - n_begin) * K + k] = w(k, n): columns [n_begin, n_end) as float rows of K, for a
// float GEMM when A has many rows (a prefill).
void Int4DequantizeColumns(const Int4Weights& w, int64_t n_begin, int64_t n_end, float* out);

// Every compiled variant this CPU can run, widest first (the one the functions above use), so
// tests check what a machine without AVX-512 would run too.
struct Int4RowsVariant {
  const char* isa;
  void (*dot)(const float*, int64_t, int64_t, const Int4Weights&, int64_t, int64_t, float*,
              int64_t);
  void (*dequantize)(const Int4Weights&, int64_t, int64_t, float*);
};
std::vector<Int4RowsVariant> RunnableInt4RowsVariants();

}  // namespace ortc::exec
