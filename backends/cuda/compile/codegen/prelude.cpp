// The prelude of every generated translation unit: storage types, fp16/bf16 conversions with
// round-to-nearest-even, and math helpers shared by the kernels of all families.
#include "cuda/compile/codegen/emitters.h"

namespace ortc::backends::cuda::codegen {

// The text compiles under NVRTC with no include path and, in tests, as host C++ after a shim
// header (which includes <cmath>). Conversions are done in integer arithmetic rather than with
// cuda_fp16.h intrinsics so that host and device run exactly the same code, bit for bit.
std::string Prelude() {
  return R"PRELUDE(// ---- ortc CUDA prelude ----
#ifdef __CUDACC_RTC__
#define ORTC_DEV __device__ __forceinline__
#else
#define ORTC_DEV inline
#endif

typedef signed char ortc_i8;
typedef unsigned char ortc_u8;
typedef unsigned short ortc_u16;
typedef unsigned int ortc_u32;
typedef int ortc_i32;
typedef long long ortc_i64;
typedef unsigned long long ortc_u64;

#ifdef __CUDACC_RTC__
ORTC_DEV ortc_u32 ortc_bits(float f) { return __float_as_uint(f); }
ORTC_DEV float ortc_from_bits(ortc_u32 u) { return __uint_as_float(u); }
#else
ORTC_DEV ortc_u32 ortc_bits(float f) {
  ortc_u32 u;
  __builtin_memcpy(&u, &f, 4);
  return u;
}
ORTC_DEV float ortc_from_bits(ortc_u32 u) {
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}
#endif

// IEEE binary16 -> float: exact.
ORTC_DEV float ortc_h2f(ortc_u16 h) {
  const ortc_u32 sign = (ortc_u32)(h & 0x8000u) << 16;
  const ortc_u32 exp = (h >> 10) & 0x1fu;
  const ortc_u32 mant = h & 0x3ffu;
  if (exp == 0x1fu) return ortc_from_bits(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24, exact in float.
    const float v = (float)mant * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  return ortc_from_bits(sign | ((exp + 112u) << 23) | (mant << 13));
}

// float -> IEEE binary16, round to nearest even; overflow gives Inf, NaN stays a quiet NaN.
ORTC_DEV ortc_u16 ortc_f2h(float f) {
  const ortc_u32 x = ortc_bits(f);
  const ortc_u32 sign = (x >> 16) & 0x8000u;
  const ortc_u32 ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return (ortc_u16)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x477ff000u) return (ortc_u16)(sign | 0x7c00u);  // >= 65520 rounds to Inf
  if (ax >= 0x38800000u) {                                   // a normal half (>= 2^-14)
    const ortc_u32 r = ax - 0x38000000u;                     // rebias 127 -> 15
    ortc_u32 h = r >> 13;
    const ortc_u32 rest = r & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
    return (ortc_u16)(sign | h);
  }
  if (ax <= 0x33000000u) return (ortc_u16)sign;  // <= 2^-25: ties to even zero
  // Subnormal half: the value in units of 2^-24 is mant >> (126 - exponent).
  const ortc_u32 e = ax >> 23;
  const ortc_u32 mant = (ax & 0x7fffffu) | 0x800000u;
  const ortc_u32 shift = 126u - e;
  ortc_u32 h = mant >> shift;
  const ortc_u32 rest = mant & ((1u << shift) - 1u);
  const ortc_u32 half = 1u << (shift - 1u);
  if (rest > half || (rest == half && (h & 1u))) ++h;
  return (ortc_u16)(sign | h);
}

// bfloat16 -> float: exact.
ORTC_DEV float ortc_bf2f(ortc_u16 b) { return ortc_from_bits((ortc_u32)b << 16); }

// float -> bfloat16, round to nearest even; NaN stays a quiet NaN.
ORTC_DEV ortc_u16 ortc_f2bf(float f) {
  const ortc_u32 x = ortc_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (ortc_u16)((x >> 16) | 0x40u);
  return (ortc_u16)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

// Math helpers (compute type float). NaN propagates through min/max as in ONNX.
ORTC_DEV bool ortc_isnan(float v) { return v != v; }
ORTC_DEV float ortc_max(float a, float b) { return ortc_isnan(a) || ortc_isnan(b) ? a + b : (a > b ? a : b); }
ORTC_DEV float ortc_min(float a, float b) { return ortc_isnan(a) || ortc_isnan(b) ? a + b : (a < b ? a : b); }
// Combiners for block reductions (a function name each).
ORTC_DEV float ortc_add(float a, float b) { return a + b; }
ORTC_DEV float ortc_mul(float a, float b) { return a * b; }
// Their integer forms (own names: an overload would make mixed int/float calls ambiguous).
// Wrapping arithmetic through unsigned, as the CPU runtime's int64 reductions wrap.
ORTC_DEV ortc_i64 ortc_addi(ortc_i64 a, ortc_i64 b) { return (ortc_i64)((ortc_u64)a + (ortc_u64)b); }
ORTC_DEV ortc_i64 ortc_muli(ortc_i64 a, ortc_i64 b) { return (ortc_i64)((ortc_u64)a * (ortc_u64)b); }
ORTC_DEV ortc_i64 ortc_maxi(ortc_i64 a, ortc_i64 b) { return a > b ? a : b; }
ORTC_DEV ortc_i64 ortc_mini(ortc_i64 a, ortc_i64 b) { return a < b ? a : b; }
ORTC_DEV float ortc_sigmoid(float v) {
  if (v >= 0.f) return 1.f / (1.f + expf(-v));
  const float e = expf(v);
  return e / (1.f + e);
}
ORTC_DEV float ortc_softplus(float v) { return v > 20.f ? v : log1pf(expf(v)); }
ORTC_DEV float ortc_sign(float v) { return v > 0.f ? 1.f : (v < 0.f ? -1.f : v); }
ORTC_DEV bool ortc_isinf(float v) { return (ortc_bits(v) & 0x7fffffffu) == 0x7f800000u; }
// float -> integer as the CPU runtime converts: NaN is 0, values beyond int64 saturate, and a
// narrower type takes the low bits of the int64 (a plain C cast is undefined for all three).
ORTC_DEV ortc_i64 ortc_f2i64(float v) {
  if (ortc_isnan(v)) return 0;
  if (v <= -9223372036854775808.f) return (-9223372036854775807LL - 1);
  if (v >= 9223372036854775808.f) return 9223372036854775807LL;
  return (ortc_i64)v;
}
// Integer arithmetic wraps modulo 2^bits, as the CPU runtime and the device's instructions do:
// computed on unsigned types, since signed overflow is undefined in C++ (and so in the host shim).
ORTC_DEV ortc_i32 ortc_wadd(ortc_i32 a, ortc_i32 b) { return (ortc_i32)((ortc_u32)a + (ortc_u32)b); }
ORTC_DEV ortc_i64 ortc_wadd(ortc_i64 a, ortc_i64 b) { return (ortc_i64)((ortc_u64)a + (ortc_u64)b); }
ORTC_DEV ortc_i32 ortc_wsub(ortc_i32 a, ortc_i32 b) { return (ortc_i32)((ortc_u32)a - (ortc_u32)b); }
ORTC_DEV ortc_i64 ortc_wsub(ortc_i64 a, ortc_i64 b) { return (ortc_i64)((ortc_u64)a - (ortc_u64)b); }
ORTC_DEV ortc_i32 ortc_wmul(ortc_i32 a, ortc_i32 b) { return (ortc_i32)((ortc_u32)a * (ortc_u32)b); }
ORTC_DEV ortc_i64 ortc_wmul(ortc_i64 a, ortc_i64 b) { return (ortc_i64)((ortc_u64)a * (ortc_u64)b); }
ORTC_DEV ortc_i32 ortc_wneg(ortc_i32 a) { return (ortc_i32)(0u - (ortc_u32)a); }
ORTC_DEV ortc_i64 ortc_wneg(ortc_i64 a) { return (ortc_i64)(0ull - (ortc_u64)a); }
// Integer Div truncates. A zero divisor gives 0 (the CPU runtime's kernel does the same; the
// hardware would trap on the host and return garbage on the device); MIN / -1 wraps to MIN.
ORTC_DEV ortc_i32 ortc_idiv(ortc_i32 a, ortc_i32 b) {
  return b == 0 ? 0 : (b == -1 ? ortc_wneg(a) : a / b);
}
ORTC_DEV ortc_i64 ortc_idiv(ortc_i64 a, ortc_i64 b) {
  return b == 0 ? 0 : (b == -1 ? ortc_wneg(a) : a / b);
}
// Integer Mod: fmod = 0 gives the remainder the divisor's sign (floored division), fmod = 1
// the dividend's (C's %). A zero divisor gives 0, as in the CPU runtime; -1 gives 0 without
// computing MIN % -1, which traps.
ORTC_DEV ortc_i32 ortc_imod(ortc_i32 a, ortc_i32 b) {
  if (b == 0 || b == -1) return 0;
  const ortc_i32 r = a % b;
  return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}
ORTC_DEV ortc_i64 ortc_imod(ortc_i64 a, ortc_i64 b) {
  if (b == 0 || b == -1) return 0;
  const ortc_i64 r = a % b;
  return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}
ORTC_DEV ortc_i32 ortc_ifmod(ortc_i32 a, ortc_i32 b) { return b == 0 || b == -1 ? 0 : a % b; }
ORTC_DEV ortc_i64 ortc_ifmod(ortc_i64 a, ortc_i64 b) { return b == 0 || b == -1 ? 0 : a % b; }
// Float Mod with fmod = 0 (outside ONNX's float domain, defined as the CPU runtime computes it):
// the remainder takes the divisor's sign, and a zero divisor gives 0. fmod = 1 is fmodf.
ORTC_DEV float ortc_fmod0(float a, float b) {
  if (b == 0.f) return 0.f;
  const float r = fmodf(a, b);
  return r != 0.f && ((r < 0.f) != (b < 0.f)) ? r + b : r;
}
// BitShift: shifting by the width or more gives 0 (C leaves it undefined).
ORTC_DEV ortc_u64 ortc_shl(ortc_u64 a, ortc_u64 k) { return k >= 64 ? 0 : a << k; }
ORTC_DEV ortc_u64 ortc_shr(ortc_u64 a, ortc_u64 k) { return k >= 64 ? 0 : a >> k; }
// An index read at run time for an axis of `dim` elements: negative values count from the end,
// and what is still out of range is clamped to the axis (the CPU runtime refuses such an index;
// a kernel cannot, and must never address outside its tensor).
ORTC_DEV ortc_i64 ortc_index(ortc_i64 v, ortc_i64 dim) {
  if (v < 0) v += dim;
  return v < 0 ? 0 : (v >= dim ? dim - 1 : v);
}
// ---- end of prelude ----
)PRELUDE";
}

}  // namespace ortc::backends::cuda::codegen
