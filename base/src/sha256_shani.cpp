// SHA-256 blocks with the x86 SHA extensions: sha256rnds2 does two rounds on the state held as
// two registers (A, B, E, F and C, D, G, H, A in the highest lane), sha256msg1 and sha256msg2
// compute the message schedule four words at a time.
#include "sha256_blocks.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace ortc::format {

#if defined(__x86_64__) || defined(__i386__)

__attribute__((target("sha,sse4.1,ssse3"))) void Sha256BlocksShaNi(uint32_t state[8],
                                                                   const uint8_t* p,
                                                                   size_t blocks) {
  // Message words are big-endian: byte-swap each 32-bit lane.
  const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
  // From (a, b, c, d), (e, f, g, h) in lanes 0..3 to ABEF and CDGH, A in lane 3.
  __m128i abcd = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state));
  __m128i efgh = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state + 4));
  abcd = _mm_shuffle_epi32(abcd, 0xB1);              // b a d c
  efgh = _mm_shuffle_epi32(efgh, 0x1B);              // h g f e
  __m128i abef = _mm_alignr_epi8(abcd, efgh, 8);     // f e b a
  __m128i cdgh = _mm_blend_epi16(efgh, abcd, 0xF0);  // h g d c
  for (; blocks > 0; --blocks, p += 64) {
    const __m128i abef_in = abef, cdgh_in = cdgh;
    // w[g % 4] holds words 4g..4g+3 of the schedule; each group needs the four before it.
    __m128i w[4];
    for (int g = 0; g < 16; ++g) {
      __m128i words;
      if (g < 4) {
        words =
            _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * g)), swap);
      } else {
        // W[t] = s1(W[t-2]) + W[t-7] + s0(W[t-15]) + W[t-16] for t = 4g..4g+3.
        __m128i t = _mm_sha256msg1_epu32(w[g % 4], w[(g + 1) % 4]);
        t = _mm_add_epi32(t, _mm_alignr_epi8(w[(g + 3) % 4], w[(g + 2) % 4], 4));
        words = _mm_sha256msg2_epu32(t, w[(g + 3) % 4]);
      }
      w[g % 4] = words;
      __m128i wk = _mm_add_epi32(
          words, _mm_load_si128(reinterpret_cast<const __m128i*>(kSha256RoundConstants + 4 * g)));
      // Two rounds with the low two words, two with the high two; the registers swap roles.
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);
      wk = _mm_shuffle_epi32(wk, 0x0E);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, wk);
    }
    abef = _mm_add_epi32(abef, abef_in);
    cdgh = _mm_add_epi32(cdgh, cdgh_in);
  }
  // Back to (a, b, c, d), (e, f, g, h).
  const __m128i feba = _mm_shuffle_epi32(abef, 0x1B);  // a b e f
  const __m128i hgdc = _mm_shuffle_epi32(cdgh, 0xB1);  // g h c d
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state), _mm_blend_epi16(feba, hgdc, 0xF0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state + 4), _mm_alignr_epi8(hgdc, feba, 8));
}

bool Sha256ExtensionsAvailable() {
  // CPUID leaf 7 EBX bit 29: SHA; leaf 1 ECX bit 19: SSE4.1 (read directly: not every compiler's
  // __builtin_cpu_supports knows "sha").
  static const bool available = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 19))) return false;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    return (b & (1u << 29)) != 0;
  }();
  return available;
}

#else

void Sha256BlocksShaNi(uint32_t state[8], const uint8_t* p, size_t blocks) {
  Sha256BlocksPortable(state, p, blocks);
}

bool Sha256ExtensionsAvailable() {
  return false;
}

#endif

}  // namespace ortc::format
