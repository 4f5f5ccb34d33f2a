// int4_rows.h's loops for the baseline instruction set (SSE2 on x86-64) or any other target: what
// every CPU runs.
#define ORTC_VECTOR_ISA baseline
#include "cpu/runtime/kernels/int4_rows_body.inc"
