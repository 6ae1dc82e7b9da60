#include "half_runs_cpu.hpp"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// GCC 12 warns that the intrinsics' own _mm512_undefined_* placeholders may be used uninitialized:
// they are the ignored pass-through operands of unmasked conversions.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#define BITPARITY_F16C_AVAILABLE 1
#endif

namespace bitparity::cpu {

#if defined(BITPARITY_F16C_AVAILABLE)

__attribute__((target("avx2,f16c"))) std::int64_t widen_f16_by_f16c(const std::uint16_t* in, float* out,
                                                                     std::int64_t count) {
  const std::int64_t whole = count - count % 8;
  for (std::int64_t i = 0; i < whole; i += 8) {
    const __m128i halves = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(halves));
  }
  return whole;
}

// vcvtps2ph with immediate 0: round to nearest even, whatever MXCSR says. A NaN lane is replaced by
// the canonical f16 NaN, as store_computed_as does.
__attribute__((target("avx2,f16c"))) std::int64_t narrow_to_f16_by_f16c(const float* in, std::uint16_t* out,
                                                                        std::int64_t count) {
  const std::int64_t whole = count - count % 8;
  const __m128i canonical = _mm_set1_epi16(static_cast<short>(kCanonicalNanF16));
  for (std::int64_t i = 0; i < whole; i += 8) {
    const __m256 values = _mm256_loadu_ps(in + i);
    const __m128i rounded = _mm256_cvtps_ph(values, _MM_FROUND_TO_NEAREST_INT);
    const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(values, values, _CMP_UNORD_Q));
    const __m128i nan16 = _mm_packs_epi32(_mm256_castsi256_si128(nan), _mm256_extracti128_si256(nan, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm_blendv_epi8(rounded, canonical, nan16));
  }
  return whole;
}

// The same 16 lanes at a time (vcvtph2ps and vcvtps2ph on zmm are AVX-512 F; the NaN blend is BW).
__attribute__((target("avx512f,avx512bw,avx512vl"))) std::int64_t widen_f16_by_avx512(const std::uint16_t* in, float* out,
                                                                                     std::int64_t count) {
  const std::int64_t whole = count - count % 16;
  for (std::int64_t i = 0; i < whole; i += 16) {
    _mm512_storeu_ps(out + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i))));
  }
  return whole;
}

__attribute__((target("avx512f,avx512bw,avx512vl"))) std::int64_t narrow_to_f16_by_avx512(const float* in, std::uint16_t* out,
                                                                                         std::int64_t count) {
  const std::int64_t whole = count - count % 16;
  const __m256i canonical = _mm256_set1_epi16(static_cast<short>(kCanonicalNanF16));
  for (std::int64_t i = 0; i < whole; i += 16) {
    const __m512 values = _mm512_loadu_ps(in + i);
    const __m256i rounded = _mm512_cvtps_ph(values, _MM_FROUND_TO_NEAREST_INT);
    const __mmask16 nan = _mm512_cmp_ps_mask(values, values, _CMP_UNORD_Q);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm256_mask_mov_epi16(rounded, nan, canonical));
  }
  return whole;
}

#else

std::int64_t widen_f16_by_avx512(const std::uint16_t*, float*, std::int64_t) { return 0; }
std::int64_t narrow_to_f16_by_avx512(const float*, std::uint16_t*, std::int64_t) { return 0; }
std::int64_t widen_f16_by_f16c(const std::uint16_t*, float*, std::int64_t) { return 0; }
std::int64_t narrow_to_f16_by_f16c(const float*, std::uint16_t*, std::int64_t) { return 0; }

#endif

}  // namespace bitparity::cpu
