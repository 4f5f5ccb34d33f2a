// vector_math.h's functions for AVX2 with FMA: 8 floats a vector.
#define ORTC_VECTOR_ISA avx2
#include "cpu/runtime/kernels/vector_math_body.inc"
