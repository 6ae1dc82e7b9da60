#pragma once
// The parts the decisions on keys (input_keys_cpu.cpp, input_keys_f32_cpu.cpp) share: the sorted
// codes as bytes, the search on 16-bit keys, the search's final positions turned into codes, and the
// stores of a step's codes. Only for code compiled with BITPARITY_KEYS_TARGET.
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

// The search on 16-bit keys, 32 per vector (input_keys_cpu.cpp's f16 and bf16 inputs, and the
// upper halves of fp32 keys in input_keys_f32_cpu.cpp). The level keys in registers, in
// input_threshold_keys' layout (entry i at position i + 1): positions 0-31 (levels 0-4), 32-63
// (level 5), 64-127 (level 6), 128-255 (level 7); and the sorted codes as bytes. Built in registers:
// keys stored 16 bits at a time and loaded as vectors stall until the stores retire.
struct NarrowLevelRegisters {
  __m512i level[8];
  __m512i root;  // position 1 in every lane: level 0's candidate, no permute
  CodeBytes codes;
};

// p becomes 2p, plus one where the candidate is below the key (both signed keys): the signed
// saturating difference candidate - key keeps the true difference's sign, so its top bit says
// "below", and a concatenating shift moves it in under p. Two instructions, where a compare into a
// mask register and a masked add took 9 cycles on Zen 5 and the unsigned saturating difference
// clamped to 1 took three: the search ran 25 % faster than with the latter.
BITPARITY_KEYS_TARGET inline __m512i next_position(__m512i position, __m512i candidate, __m512i key) {
  return _mm512_shldi_epi16(position, _mm512_subs_epi16(candidate, key), 1);
}

// One level of count_below on 32 keys, the search's position p = 2^Level + (count >> (Levels - Level))
// kept as it is (p = 1 at the root, children 2p and 2p + 1): the candidate at position p, compared
// with the key (next_position).
template <int Level>
BITPARITY_KEYS_TARGET inline __m512i level_candidate(const NarrowLevelRegisters& r, __m512i position) {
  if constexpr (Level <= 4) {  // positions 1-31
    return _mm512_permutexvar_epi16(position, r.level[0]);
  } else if constexpr (Level == 5) {  // 32-63: the permute reads the low five bits
    return _mm512_permutexvar_epi16(position, r.level[1]);
  } else if constexpr (Level == 6) {  // 64-127: the low six
    return _mm512_permutex2var_epi16(r.level[2], position, r.level[3]);
  } else {  // 128-255: bit 6 picks the pair
    return _mm512_mask_blend_epi16(_mm512_test_epi16_mask(position, _mm512_set1_epi16(64)),
                                   _mm512_permutex2var_epi16(r.level[4], position, r.level[5]),
                                   _mm512_permutex2var_epi16(r.level[6], position, r.level[7]));
  }
}

template <int Level>
BITPARITY_KEYS_TARGET inline __m512i level_step(const NarrowLevelRegisters& r, __m512i position, __m512i key) {
  return next_position(position, level_candidate<Level>(r, position), key);
}

// Each level on every vector before the next level: the levels of one vector wait on each other
// (about 8 cycles each), so the searches of N vectors are interleaved for the scheduler.
template <int Level, int Levels, int N>
BITPARITY_KEYS_TARGET inline void levels_from(const NarrowLevelRegisters& r, __m512i (&position)[N], const __m512i (&key)[N]) {
  if constexpr (Level < Levels) {
    for (int v = 0; v < N; ++v) position[v] = level_step<Level>(r, position[v], key[v]);
    levels_from<Level + 1, Levels>(r, position, key);
  }
}

// The code bytes of 64 inputs from the two vectors of their 16-bit final positions.
template <int Levels>
BITPARITY_KEYS_TARGET inline __m512i codes_of_narrow_positions(const CodeBytes& r, __m512i low, __m512i high) {
  const __m512i index = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi16_epi8(low)), _mm512_cvtepi16_epi8(high), 1);
  return codes_of_positions<Levels>(r, index);
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
