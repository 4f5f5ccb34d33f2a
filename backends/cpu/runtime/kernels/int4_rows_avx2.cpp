// int4_rows.h's loops for AVX2 with FMA: two 8-float vectors per 16 lanes.
#define ORTC_VECTOR_ISA avx2
#include "cpu/runtime/kernels/int4_rows_body.inc"
