// int4_rows.h's loops for AVX-512 (avx512f): 16 floats a vector.
#define ORTC_VECTOR_ISA avx512
#include "cpu/runtime/kernels/int4_rows_body.inc"
