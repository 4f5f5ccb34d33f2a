// vector_math.h's functions for AVX-512 (avx512f): 16 floats a vector.
#define ORTC_VECTOR_ISA avx512
#include "cpu/runtime/kernels/vector_math_body.inc"
