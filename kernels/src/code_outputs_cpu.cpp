#include "code_outputs_cpu.hpp"

#include <cmath>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// GCC 12 warns about the intrinsics' own undefined pass-through operands (input_keys_cpu.cpp).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#define BITPARITY_AVX512_OUTPUTS 1
#endif

namespace bitparity::cpu {

#if defined(BITPARITY_AVX512_OUTPUTS)

namespace {

// Round-to-odd products of 16 code values, NaN as the canonical fp32 NaN (which narrows to the
// canonical f16 and bf16 NaNs). Code values are finite and in [-1, 1] (quant_tables.cpp), so a
// finite absmax gives finite products: only a NaN or infinite one (infinity times a zero code) gives
// a NaN, and blocks of finite absmax skip the check.
template <bool AbsmaxFinite>
__attribute__((target("avx512f,avx512bw"))) inline __m512 odd_products(const float* code_values, __m512 scale) {
  const __m512 value = _mm512_loadu_ps(code_values);
  const __m512 toward_zero = _mm512_mul_round_ps(value, scale, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  // Exact for the products that matter; NaN (never "inexact") where the product is not finite.
  const __m512 error = _mm512_fmsub_ps(value, scale, toward_zero);
  const __mmask16 inexact = _mm512_cmp_ps_mask(error, _mm512_setzero_ps(), _CMP_NEQ_OQ);
  const __m512i bits = _mm512_castps_si512(toward_zero);
  const __m512i odd = _mm512_mask_or_epi32(bits, inexact, bits, _mm512_set1_epi32(1));
  if constexpr (AbsmaxFinite) return _mm512_castsi512_ps(odd);
  const __mmask16 nan = _mm512_cmp_ps_mask(toward_zero, toward_zero, _CMP_UNORD_Q);
  return _mm512_castsi512_ps(_mm512_mask_mov_epi32(odd, nan, _mm512_set1_epi32(static_cast<int>(kCanonicalNanF32))));
}

// round_float_to_narrow<8, 7> in 32-bit lanes, the bf16 word in the high half: to nearest even on
// the bits. The sign rides along: a magnitude below NaN's cannot carry into it.
__attribute__((target("avx512f,avx512bw"))) inline __m512i bf16_in_high_halves(__m512 value) {
  const __m512i bits = _mm512_castps_si512(value);
  const __m512i tie_bit = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  return _mm512_add_epi32(bits, _mm512_add_epi32(tie_bit, _mm512_set1_epi32(0x7FFF)));
}

// 32 words per 64-byte store: the selection loads the table 64 bytes at a time, and a load that
// spans two stores waits for them to retire instead of taking their data.
template <bool AbsmaxFinite>
__attribute__((target("avx512f,avx512bw"))) void outputs_of_codes_of(const float* code_values, float absmax, bool half,
                                                                    std::uint16_t* of_code, int codes) {
  const __m512 scale = _mm512_set1_ps(absmax);
  if (codes == 16) {  // a 4-bit map's
    const __m512 odd = odd_products<AbsmaxFinite>(code_values, scale);
    const __m256i words = half ? _mm512_cvtps_ph(odd, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
                               : _mm512_cvtepi32_epi16(_mm512_srli_epi32(bf16_in_high_halves(odd), 16));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(of_code), words);
    return;
  }
  alignas(64) static constexpr std::uint16_t kHighWords[32] = {1,  3,  5,  7,  9,  11, 13, 15, 17, 19, 21,
                                                               23, 25, 27, 29, 31, 33, 35, 37, 39, 41, 43,
                                                               45, 47, 49, 51, 53, 55, 57, 59, 61, 63};
  const __m512i high_words = _mm512_load_si512(kHighWords);
  for (int first = 0; first < 256; first += 32) {
    const __m512 low = odd_products<AbsmaxFinite>(code_values + first, scale);
    const __m512 high = odd_products<AbsmaxFinite>(code_values + first + 16, scale);
    __m512i words;
    if (half) {
      words = _mm512_inserti64x4(
          _mm512_castsi256_si512(_mm512_cvtps_ph(low, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)),
          _mm512_cvtps_ph(high, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), 1);
    } else {
      words = _mm512_permutex2var_epi16(bf16_in_high_halves(low), high_words, bf16_in_high_halves(high));
    }
    _mm512_storeu_si512(of_code + first, words);
  }
}

}  // namespace

void outputs_of_codes_avx512(const float* code_values, float absmax, bool half, std::uint16_t* of_code, int codes) {
  if (std::isfinite(absmax)) {
    outputs_of_codes_of<true>(code_values, absmax, half, of_code, codes);
  } else {
    outputs_of_codes_of<false>(code_values, absmax, half, of_code, codes);
  }
}

#else

void outputs_of_codes_avx512(const float*, float, bool, std::uint16_t*, int) {}

#endif

}  // namespace bitparity::cpu
