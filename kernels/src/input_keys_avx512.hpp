#pragma once
// The byte side of the decisions on keys (input_keys_cpu.cpp), apart from the keys and their
// search: the sorted codes as bytes, the search's final positions turned into codes, and the stores
// of a step's codes. Only for code compiled with BITPARITY_KEYS_TARGET.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// GCC 12 warns that the intrinsics' own _mm512_undefined_* placeholders are (or may be) used
// uninitialized: they are the ignored pass-through operands of unmasked conversions.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#define BITPARITY_AVX512_KEYS 1

#include <cstdint>

#include "bitparity/kernels/quant_format.hpp"

#define BITPARITY_KEYS_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx512vbmi2")))

namespace bitparity::cpu::keys {

// sorted_codes as bytes, 64 per register, for the counts of a search of 2^Levels - 1 thresholds.
struct CodeBytes {
  __m512i codes[4];
};

template <int Levels>
BITPARITY_KEYS_TARGET inline void code_bytes(const CodeTable& table, CodeBytes& r) {
  for (int k = 0; k < ((1 << Levels) + 63) / 64; ++k) r.codes[k] = _mm512_loadu_si512(table.sorted_code_bytes + 64 * k);
}

// The codes of 64 searches from their final positions' low bytes (position = 2^Levels + count;
// the byte permutes read the count from the low bits where Levels >= 6).
template <int Levels>
BITPARITY_KEYS_TARGET inline __m512i codes_of_positions(const CodeBytes& r, __m512i index) {
  if constexpr (Levels < 6) index = _mm512_sub_epi8(index, _mm512_set1_epi8(static_cast<char>(1 << Levels)));
  if constexpr (Levels <= 6) {  // counts below 64
    return _mm512_permutexvar_epi8(index, r.codes[0]);
  } else if constexpr (Levels == 7) {
    return _mm512_permutex2var_epi8(r.codes[0], index, r.codes[1]);
  } else {
    const __m512i below_128 = _mm512_permutex2var_epi8(r.codes[0], index, r.codes[1]);
    const __m512i from_128 = _mm512_permutex2var_epi8(r.codes[2], index, r.codes[3]);
    return _mm512_mask_blend_epi8(_mm512_movepi8_mask(index), below_128, from_128);
  }
}

// Element 2k in the high nibble of byte k, element 2k+1 in the low one.
BITPARITY_KEYS_TARGET inline __m256i nibble_pairs(__m512i code) {
  return _mm512_cvtepi16_epi8(_mm512_or_si512(_mm512_slli_epi16(code, 4), _mm512_srli_epi16(code, 8)));
}

// The codes of elements [first, first + 64) of a block, as bytes or as nibble pairs (first even).
BITPARITY_KEYS_TARGET inline void store_codes(int bits_per_code, std::uint8_t* codes, std::int64_t first, __m512i code) {
  if (bits_per_code == 8) {
    _mm512_storeu_si512(codes + first, code);
  } else {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(codes + first / 2), nibble_pairs(code));
  }
}

// The same for the block's last `rest` (< 64) elements; a missing last element of a 4-bit block
// leaves its low nibble 0. Masked stores only here: on Zen 4 and 5 they are several times slower
// than plain ones.
BITPARITY_KEYS_TARGET inline void store_last_codes(int bits_per_code, std::uint8_t* codes, std::int64_t first, int rest,
                                                   __m512i code) {
  const __mmask64 valid = (__mmask64{1} << rest) - 1u;
  code = _mm512_maskz_mov_epi8(valid, code);
  if (bits_per_code == 8) {
    _mm512_mask_storeu_epi8(codes + first, valid, code);
  } else {
    _mm256_mask_storeu_epi8(codes + first / 2, static_cast<__mmask32>((__mmask64{1} << ((rest + 1) / 2)) - 1u),
                            nibble_pairs(code));
  }
}

}  // namespace bitparity::cpu::keys

#endif
