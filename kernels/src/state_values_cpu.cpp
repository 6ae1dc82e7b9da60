#include "state_values_cpu.hpp"

#include "input_keys_avx512.hpp"  // the AVX-512 target and includes

namespace bitparity::cpu {

#if defined(BITPARITY_AVX512_KEYS)

namespace {

// Byte 16L + 4q + i of a permuted vector is code 16q + 4L + i: after the two rounds of unpacks
// below, which work within 128-bit lanes, value vector q then holds codes 16q .. 16q + 15 in order.
alignas(64) constexpr std::uint8_t kUnpackOrder[64] = {
    0,  1,  2,  3,  16, 17, 18, 19, 32, 33, 34, 35, 48, 49, 50, 51, 4,  5,  6,  7,  20, 21,
    22, 23, 36, 37, 38, 39, 52, 53, 54, 55, 8,  9,  10, 11, 24, 25, 26, 27, 40, 41, 42, 43,
    56, 57, 58, 59, 12, 13, 14, 15, 28, 29, 30, 31, 44, 45, 46, 47, 60, 61, 62, 63};

struct Planes {
  __m512i plane[4][4];  // plane b, codes 64r .. 64r + 63
};

// fl32(value * scale) in each lane, the canonical NaN for a NaN where CanonicalNan.
template <bool CanonicalNan>
BITPARITY_KEYS_TARGET inline __m512 product(__m512i value_bits, __m512 scale) {
  const __m512 scaled = _mm512_mul_ps(_mm512_castsi512_ps(value_bits), scale);
  if constexpr (!CanonicalNan) return scaled;
  const __m512 canonical_nan = _mm512_castsi512_ps(_mm512_set1_epi32(static_cast<int>(kCanonicalNanF32)));
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(scaled, scaled, _CMP_UNORD_Q), scaled, canonical_nan);
}

// fl32(code value * absmax) of the first count - count % 64 codes; NaN products as the canonical NaN
// where CanonicalNan (dequantized_in_fp32), as they come where not (dequantize_state).
template <bool CanonicalNan>
BITPARITY_KEYS_TARGET std::int64_t products_of_codes(const CodeTable& table, const std::uint8_t* codes, float absmax,
                                                     float* out, std::int64_t count) {
  Planes planes;
  for (int b = 0; b < 4; ++b) {
    for (int r = 0; r < 4; ++r) planes.plane[b][r] = _mm512_loadu_si512(table.code_value_planes[b] + 64 * r);
  }
  const __m512i order = _mm512_load_si512(kUnpackOrder);
  const __m512 scale = _mm512_set1_ps(absmax);
  const std::int64_t whole = count - count % 64;
  for (std::int64_t j = 0; j < whole; j += 64) {
    const __m512i index = _mm512_permutexvar_epi8(order, _mm512_loadu_si512(codes + j));
    const __mmask64 upper_half = _mm512_movepi8_mask(index);  // codes 128-255
    __m512i bytes[4];
    for (int b = 0; b < 4; ++b) {
      bytes[b] = _mm512_mask_blend_epi8(upper_half, _mm512_permutex2var_epi8(planes.plane[b][0], index, planes.plane[b][1]),
                                        _mm512_permutex2var_epi8(planes.plane[b][2], index, planes.plane[b][3]));
    }
    const __m512i low_words[2] = {_mm512_unpacklo_epi8(bytes[0], bytes[1]), _mm512_unpackhi_epi8(bytes[0], bytes[1])};
    const __m512i high_words[2] = {_mm512_unpacklo_epi8(bytes[2], bytes[3]), _mm512_unpackhi_epi8(bytes[2], bytes[3])};
    for (int h = 0; h < 2; ++h) {
      _mm512_storeu_ps(out + j + 32 * h, product<CanonicalNan>(_mm512_unpacklo_epi16(low_words[h], high_words[h]), scale));
      _mm512_storeu_ps(out + j + 32 * h + 16, product<CanonicalNan>(_mm512_unpackhi_epi16(low_words[h], high_words[h]), scale));
    }
  }
  return whole;
}

}  // namespace

BITPARITY_KEYS_TARGET std::int64_t states_of_codes_avx512(const CodeTable& table, const std::uint8_t* codes,
                                                          float absmax, float* out, std::int64_t count) {
  return products_of_codes<false>(table, codes, absmax, out, count);
}

BITPARITY_KEYS_TARGET std::int64_t dequantized_f32_of_codes_avx512(const CodeTable& table, const std::uint8_t* codes,
                                                                   float absmax, float* out, std::int64_t count) {
  return products_of_codes<true>(table, codes, absmax, out, count);
}

#else

std::int64_t states_of_codes_avx512(const CodeTable&, const std::uint8_t*, float, float*, std::int64_t) { return 0; }
std::int64_t dequantized_f32_of_codes_avx512(const CodeTable&, const std::uint8_t*, float, float*, std::int64_t) { return 0; }

#endif

}  // namespace bitparity::cpu
