// vector_math.h's functions for the x86-64 baseline (SSE2) or any other target: what every CPU
// runs.
#define ORTC_VECTOR_ISA baseline
#include "cpu/runtime/kernels/vector_math_body.inc"
