// The CPU launcher's nearest codes of contiguous fp32 blocks decided on the inputs themselves
// (input_keys.hpp): the block's thresholds become 32-bit keys once, and count_below's search runs on
// 16 keys per vector, each candidate picked by a permute from registers; 8-bit maps search the
// keys' upper halves, 32 per vector, and check the count against one key. No division per element,
// and no gather of the finer index the fp32 path loads for every 16 elements.
#include "bitparity/kernels/input_keys.hpp"
#include "input_keys_avx512.hpp"
#include "input_keys_cpu.hpp"

#include <limits>

namespace bitparity::cpu {

#if defined(BITPARITY_AVX512_KEYS)

namespace {

using keys::CodeBytes;

BITPARITY_KEYS_TARGET inline __m512i order_keys(__m512i bits) {
  return _mm512_xor_si512(bits, _mm512_or_si512(_mm512_srai_epi32(bits, 31), _mm512_set1_epi32(INT32_MIN)));
}

// Blocks of absmax below 2 search on signed keys (order keys with the top bit flipped: a positive
// value's magnitude bits, a negative one's complement), where every input's key lies within
// +-(2^30 - 1): the difference of two such keys cannot overflow, so its sign says which is below
// and the search's step takes two instructions (level_step). The level keys are clamped to
// [-2^30, 2^30 - 1], which keeps their order against every input (the +inf padding becomes 2^30 - 1,
// above them all). Other blocks compare unsigned keys into a mask.
inline constexpr std::uint32_t kLargestSignedKeysAbsmax = 0x3FFFFFFEu;  // the pattern below 2.0's predecessor

BITPARITY_KEYS_TARGET inline __m512i signed_order_keys(__m512i bits) {
  return _mm512_xor_si512(bits, _mm512_and_si512(_mm512_srai_epi32(bits, 31), _mm512_set1_epi32(0x7FFFFFFF)));
}

// Level keys (unsigned order keys) as signed keys in [-2^30, 2^30 - 1].
BITPARITY_KEYS_TARGET inline __m512i clamped_signed_keys(__m512i keys) {
  const __m512i flipped = _mm512_xor_si512(keys, _mm512_set1_epi32(INT32_MIN));
  return _mm512_min_epi32(_mm512_max_epi32(flipped, _mm512_set1_epi32(-(1 << 30))), _mm512_set1_epi32((1 << 30) - 1));
}

// The table's key parts in one order: by search position (the search's level registers; unsigned
// order keys) or by sorted count (the upper-half search, below; signed keys, the top bit in the
// flips).
struct KeyParts {
  const double* bounds;
  const float* thresholds;
  const float* half_gaps;
  const std::uint32_t* flips;
  const std::int32_t* steps;
};

inline KeyParts parts_by_position(const CodeTable& table) {
  return {table.key_bounds_by_position, table.key_thresholds_by_position, table.key_half_gaps_by_position,
          table.key_flips_by_position, table.key_steps_by_position};
}

inline KeyParts parts_by_count(const CodeTable& table) {
  return {table.key_bounds_by_count, table.key_thresholds_by_count, table.key_half_gaps_by_count, table.key_flips_by_count,
          table.key_steps_by_count};
}

// The keys of entries [first, first + 16) for fp32 inputs, as input_keys_cpu.cpp's
// threshold_keys_16 without the narrowing: RD32 of the bound (negated where the edge is open), from
// one fp32 fma where the block allows, else from the double, then the entry's xor and step
// (CodeTable::key_flips_by_position). Unsigned order keys.
template <bool BoundsInFp32>
BITPARITY_KEYS_TARGET inline __m512i threshold_keys_of_16(const KeyParts& parts, int first, __m512d wide, __m512 narrow) {
  constexpr int kDown = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
  __m512 down;
  if constexpr (BoundsInFp32) {
    const __m512 half_gap = _mm512_mul_ps(_mm512_loadu_ps(parts.half_gaps + first), narrow);
    down = _mm512_fmadd_round_ps(_mm512_loadu_ps(parts.thresholds + first), narrow, half_gap, kDown);
  } else {
    const __m512d bound_low = _mm512_mul_pd(_mm512_loadu_pd(parts.bounds + first), wide);
    const __m512d bound_high = _mm512_mul_pd(_mm512_loadu_pd(parts.bounds + first + 8), wide);
    down = _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvt_roundpd_ps(bound_low, kDown)),
                              _mm512_cvt_roundpd_ps(bound_high, kDown), 1);
  }
  const __m512i flipped = _mm512_xor_si512(_mm512_castps_si512(down), _mm512_loadu_si512(parts.flips + first));
  return _mm512_add_epi32(flipped, _mm512_loadu_si512(parts.steps + first));
}

// The level keys in registers by search position, 16 per register: positions 0-15 (levels 0-3),
// 16-31 (4), 32-63 (5), 64-127 (6), 128-255 (7).
struct LevelRegisters {
  __m512i level[16];
  __m512i root, left, right;  // positions 1, 2 and 3 in every lane: levels 0 and 1 without permutes
  CodeBytes codes;
};

BITPARITY_KEYS_TARGET inline bool bounds_in_fp32(const CodeTable& table, float absmax) {
  return static_cast<double>(absmax) * static_cast<double>(table.smallest_half_gap) >= 0x1p-126;
}

template <int Levels, bool BoundsInFp32>
BITPARITY_KEYS_TARGET void level_registers_of(const CodeTable& table, float absmax, LevelRegisters& r) {
  const __m512d wide = _mm512_set1_pd(static_cast<double>(absmax));
  const __m512 narrow = _mm512_set1_ps(absmax);
  // Positions past the levels (padding edges, +inf) lie above every finite input's key.
  const KeyParts parts = parts_by_position(table);
  for (int k = 0; k < ((1 << Levels) + 15) / 16; ++k) r.level[k] = threshold_keys_of_16<BoundsInFp32>(parts, 16 * k, wide, narrow);
}

template <int Levels>
BITPARITY_KEYS_TARGET void level_registers(const CodeTable& table, float absmax, LevelRegisters& r) {
  if (bounds_in_fp32(table, absmax)) {
    level_registers_of<Levels, true>(table, absmax, r);
  } else {
    level_registers_of<Levels, false>(table, absmax, r);
  }
  r.root = _mm512_permutexvar_epi32(_mm512_set1_epi32(1), r.level[0]);
  r.left = _mm512_permutexvar_epi32(_mm512_set1_epi32(2), r.level[0]);
  r.right = _mm512_permutexvar_epi32(_mm512_set1_epi32(3), r.level[0]);
  keys::code_bytes<Levels>(table, r.codes);
}

// One level of count_below on 16 keys (input_keys_cpu.cpp's level_step on 32-bit lanes): the
// candidate at position p, and p becomes 2p, plus one where the candidate is below the key. On
// signed keys the difference's sign bit is shifted in under p (vpshldd); on unsigned ones a compare
// into a mask measured faster here, with eight vectors interleaved, than the borrow of
// candidate - key by ternary logic.
template <int Level, bool SignedKeys>
BITPARITY_KEYS_TARGET inline __m512i level_step(const LevelRegisters& r, __m512i position, __m512i key) {
  __m512i candidate;
  if constexpr (Level <= 3) {  // positions 1-15
    candidate = _mm512_permutexvar_epi32(position, r.level[0]);
  } else if constexpr (Level == 4) {  // 16-31: the permute reads the low four bits
    candidate = _mm512_permutexvar_epi32(position, r.level[1]);
  } else if constexpr (Level == 5) {  // 32-63: the low five
    candidate = _mm512_permutex2var_epi32(r.level[2], position, r.level[3]);
  } else if constexpr (Level == 6) {  // 64-127: bit 5 picks the pair
    candidate = _mm512_mask_blend_epi32(_mm512_test_epi32_mask(position, _mm512_set1_epi32(32)),
                                        _mm512_permutex2var_epi32(r.level[4], position, r.level[5]),
                                        _mm512_permutex2var_epi32(r.level[6], position, r.level[7]));
  } else {  // 128-255: bits 5 and 6 pick one of four pairs
    const __mmask16 bit5 = _mm512_test_epi32_mask(position, _mm512_set1_epi32(32));
    const __m512i low = _mm512_mask_blend_epi32(bit5, _mm512_permutex2var_epi32(r.level[8], position, r.level[9]),
                                                _mm512_permutex2var_epi32(r.level[10], position, r.level[11]));
    const __m512i high = _mm512_mask_blend_epi32(bit5, _mm512_permutex2var_epi32(r.level[12], position, r.level[13]),
                                                 _mm512_permutex2var_epi32(r.level[14], position, r.level[15]));
    candidate = _mm512_mask_blend_epi32(_mm512_test_epi32_mask(position, _mm512_set1_epi32(64)), low, high);
  }
  if constexpr (SignedKeys) return _mm512_shldi_epi32(position, _mm512_sub_epi32(candidate, key), 1);
  const __m512i doubled = _mm512_add_epi32(position, position);
  return _mm512_mask_sub_epi32(doubled, _mm512_cmplt_epu32_mask(candidate, key), doubled, _mm512_set1_epi32(-1));
}

template <int Level, int Levels, bool SignedKeys, int N>
BITPARITY_KEYS_TARGET inline void levels_from(const LevelRegisters& r, __m512i (&position)[N], const __m512i (&key)[N]) {
  if constexpr (Level < Levels) {
    for (int v = 0; v < N; ++v) position[v] = level_step<Level, SignedKeys>(r, position[v], key[v]);
    levels_from<Level + 1, Levels, SignedKeys>(r, position, key);
  }
}

// The codes of 16 * N inputs (N a multiple of 4) as N / 4 vectors of bytes, the searches of the N
// vectors interleaved: each level waits on the last.
template <int Levels, bool SignedKeys, int N>
BITPARITY_KEYS_TARGET inline void codes_of(const LevelRegisters& r, const __m512i (&bits)[N], __m512i (&codes)[N / 4]) {
  __m512i key[N], position[N];
  if constexpr (SignedKeys) {
    // Level 0 from the broadcast root, then permutes.
    for (int v = 0; v < N; ++v) {
      key[v] = signed_order_keys(bits[v]);
      position[v] = _mm512_shldi_epi32(_mm512_set1_epi32(1), _mm512_sub_epi32(r.root, key[v]), 1);
    }
    levels_from<1, Levels, true>(r, position, key);
  } else if constexpr (Levels >= 2) {
    for (int v = 0; v < N; ++v) key[v] = order_keys(bits[v]);
    // Levels 0 and 1 from the broadcast root and its children: a compare and a blend, no permute.
    for (int v = 0; v < N; ++v) {
      const __mmask16 above_root = _mm512_cmplt_epu32_mask(r.root, key[v]);
      const __m512i child = _mm512_mask_blend_epi32(above_root, r.left, r.right);
      const __m512i position_2 = _mm512_mask_blend_epi32(above_root, _mm512_set1_epi32(4), _mm512_set1_epi32(6));
      position[v] = _mm512_mask_add_epi32(position_2, _mm512_cmplt_epu32_mask(child, key[v]), position_2, _mm512_set1_epi32(1));
    }
    levels_from<2, Levels, false>(r, position, key);
  } else {
    for (int v = 0; v < N; ++v) {
      key[v] = order_keys(bits[v]);
      position[v] = _mm512_set1_epi32(1);
    }
    levels_from<0, Levels, false>(r, position, key);
  }
  for (int v = 0; v < N / 4; ++v) {
    const __m256i low = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm512_cvtepi32_epi8(position[4 * v])),
                                                _mm512_cvtepi32_epi8(position[4 * v + 1]), 1);
    const __m256i high = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm512_cvtepi32_epi8(position[4 * v + 2])),
                                                 _mm512_cvtepi32_epi8(position[4 * v + 3]), 1);
    codes[v] = keys::codes_of_positions<Levels>(r.codes, _mm512_inserti64x4(_mm512_castsi256_si512(low), high, 1));
  }
}

// The inputs [first, min(first + 64, count)) as four vectors, zeros past the end; returns how many.
BITPARITY_KEYS_TARGET inline int load_up_to_64(const float* in, std::int64_t first, std::int64_t count, __m512i (&bits)[4]) {
  const int rest = count - first < 64 ? static_cast<int>(count - first) : 64;
  for (int v = 0; v < 4; ++v) {
    const int lanes = rest - 16 * v < 0 ? 0 : (rest - 16 * v > 16 ? 16 : rest - 16 * v);
    bits[v] = _mm512_maskz_loadu_epi32(static_cast<__mmask16>((1u << lanes) - 1u), in + first + 16 * v);
  }
  return rest;
}

// The codes of those `rest` inputs.
BITPARITY_KEYS_TARGET inline void store_up_to_64(int bits_per_code, std::uint8_t* codes, std::int64_t first, int rest, __m512i code) {
  if (rest == 64) {
    keys::store_codes(bits_per_code, codes, first, code);
  } else {
    keys::store_last_codes(bits_per_code, codes, first, rest, code);
  }
}

// The codes of `count` inputs from a block's level registers.
template <int Levels, bool SignedKeys>
BITPARITY_KEYS_TARGET inline void codes_by_keys(const LevelRegisters& r, int bits_per_code, const float* in, std::int64_t count,
                                                std::uint8_t* codes) {
  std::int64_t first = 0;
  for (; first + 128 <= count; first += 128) {
    __m512i bits[8];
    for (int v = 0; v < 8; ++v) bits[v] = _mm512_loadu_si512(in + first + 16 * v);
    __m512i code[2];
    codes_of<Levels, SignedKeys>(r, bits, code);
    keys::store_codes(bits_per_code, codes, first, code[0]);
    keys::store_codes(bits_per_code, codes, first + 64, code[1]);
  }
  for (; first < count; first += 64) {
    __m512i bits[4];
    const int rest = load_up_to_64(in, first, count, bits);
    __m512i code[1];
    codes_of<Levels, SignedKeys>(r, bits, code);
    store_up_to_64(bits_per_code, codes, first, rest, code[0]);
  }
}

// 8-bit maps search the keys' upper halves, 32 per vector, as the f16 and bf16 inputs do
// (keys::level_step), and then check the count against one key. On signed keys, with u the upper
// half (signed) and l the lower half (unsigned), K < X exactly when u(K) < u(X), or u(K) = u(X) and
// l(K) < l(X). The search counts c = #{K : u(K) < u(X)}, and the keys ascend, so every key it missed
// has u(K) = u(X) and lies at c or above: where no two keys that a finite input's upper half can
// equal share an upper half (checked per block, distinct_upper_halves), only key c can, and the
// count is c + [u(K_c) = u(X) and l(K_c) < l(X)]. K_c is among the keys the search compared (in a
// complete search tree both keys that bound a leaf's gap are its ancestors), so u(K_c) = u(X)
// exactly where some level's difference was 0: the search keeps the smallest (unsigned), and only
// l(K_c) is looked up by count (two permutes from four register pairs each). Per 16 inputs this is
// about 30 % fewer instructions than the search on whole keys (16 lanes, and two or four permutes
// plus blends at its last levels), the block's keys costing a little more: computed in sorted
// order, then rearranged. Two-source word permutes issue one per cycle on Zen 5 (one-source ones
// and the search's other steps two), so the inputs' halves are split by shifts and blends, not
// permutes, and the tie is tracked rather than looked up: 7 of them per 32 inputs, where there were
// 13 (fp32 quantize 5 % faster).
struct UpperHalfKeys {
  keys::NarrowLevelRegisters upper;  // by search position, and the codes
  __m512i lower_by_count[8];
};

// Word indices: the upper and lower halves of 32 keys in two registers, and each word's successor.
BITPARITY_KEYS_TARGET inline __m512i upper_words() {
  return _mm512_set_epi16(63, 61, 59, 57, 55, 53, 51, 49, 47, 45, 43, 41, 39, 37, 35, 33, 31, 29, 27, 25, 23, 21, 19, 17, 15, 13,
                          11, 9, 7, 5, 3, 1);
}
BITPARITY_KEYS_TARGET inline __m512i lower_words() {
  return _mm512_set_epi16(62, 60, 58, 56, 54, 52, 50, 48, 46, 44, 42, 40, 38, 36, 34, 32, 30, 28, 26, 24, 22, 20, 18, 16, 14, 12,
                          10, 8, 6, 4, 2, 0);
}
BITPARITY_KEYS_TARGET inline __m512i next_words() {
  return _mm512_set_epi16(32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6,
                          5, 4, 3, 2, 1);
}

// Positions 1-127 (levels 0-6) hold the odd sorted indices s, at (s - 1) / 2 among the odd ones:
// the index of each position's key there, for the first four level registers (position 0 unused).
struct OddIndexOfPosition {
  alignas(64) std::int16_t words[128];
};
constexpr OddIndexOfPosition odd_index_of_position() {
  OddIndexOfPosition out{};
  for (int position = 1; position < 128; ++position) {
    int level = 0;
    while ((2 << level) <= position) ++level;
    const int sorted = (2 * (position - (1 << level)) + 1) * (128 >> level) - 1;
    out.words[position] = static_cast<std::int16_t>((sorted - 1) / 2);
  }
  return out;
}
inline constexpr OddIndexOfPosition kOddIndexOfPosition = odd_index_of_position();

// Word `count` (bits 0-7 of each lane) of eight registers of 32.
BITPARITY_KEYS_TARGET inline __m512i word_by_count(const __m512i (&table)[8], __m512i count, __mmask32 bit6, __mmask32 bit7) {
  const __m512i below_128 = _mm512_mask_blend_epi16(bit6, _mm512_permutex2var_epi16(table[0], count, table[1]),
                                                    _mm512_permutex2var_epi16(table[2], count, table[3]));
  const __m512i from_128 = _mm512_mask_blend_epi16(bit6, _mm512_permutex2var_epi16(table[4], count, table[5]),
                                                   _mm512_permutex2var_epi16(table[6], count, table[7]));
  return _mm512_mask_blend_epi16(bit7, below_128, from_128);
}

// No two neighbours in sorted order share an upper half that a finite input's key can have: every
// upper half but +inf's 0x7F80 (the padding's; the lowest, -inf's 0x807F, only where absmax
// overflows a bound, and then two of them fail the check).
BITPARITY_KEYS_TARGET inline bool distinct_upper_halves(const __m512i (&upper)[8]) {
  const __m512i infinity = _mm512_set1_epi16(0x7F80);
  __mmask32 shared = 0;
  for (int m = 0; m < 8; ++m) {
    const __m512i next = _mm512_permutex2var_epi16(upper[m], next_words(), upper[m < 7 ? m + 1 : m]);
    const __mmask32 compared = _mm512_cmpneq_epi16_mask(upper[m], infinity) & (m < 7 ? 0xFFFFFFFFu : 0x7FFFFFFFu);
    shared |= _mm512_mask_cmpeq_epi16_mask(compared, upper[m], next);
  }
  return shared == 0;
}

// The block's keys in sorted order (signed), their halves by count, and the upper halves by search
// position: levels 0-6 from the odd sorted indices, level 7 the even ones in order.
template <bool BoundsInFp32>
BITPARITY_KEYS_TARGET inline bool upper_half_keys_of(const CodeTable& table, float absmax, UpperHalfKeys& out) {
  const __m512d wide = _mm512_set1_pd(static_cast<double>(absmax));
  const __m512 narrow = _mm512_set1_ps(absmax);
  const KeyParts parts = parts_by_count(table);
  __m512i upper_by_count[8];
  for (int m = 0; m < 8; ++m) {  // signed keys: parts_by_count's flips flip the top bit
    const __m512i low = threshold_keys_of_16<BoundsInFp32>(parts, 32 * m, wide, narrow);
    const __m512i high = threshold_keys_of_16<BoundsInFp32>(parts, 32 * m + 16, wide, narrow);
    upper_by_count[m] = _mm512_permutex2var_epi16(low, upper_words(), high);
    out.lower_by_count[m] = _mm512_permutex2var_epi16(low, lower_words(), high);
  }
  if (!distinct_upper_halves(upper_by_count)) return false;
  __m512i odd[4];
  for (int q = 0; q < 4; ++q) odd[q] = _mm512_permutex2var_epi16(upper_by_count[2 * q], upper_words(), upper_by_count[2 * q + 1]);
  for (int k = 0; k < 4; ++k) {
    const __m512i index = _mm512_load_si512(kOddIndexOfPosition.words + 32 * k);
    out.upper.level[k] = _mm512_mask_blend_epi16(_mm512_test_epi16_mask(index, _mm512_set1_epi16(64)),
                                                 _mm512_permutex2var_epi16(odd[0], index, odd[1]),
                                                 _mm512_permutex2var_epi16(odd[2], index, odd[3]));
  }
  for (int m = 0; m < 4; ++m) {
    out.upper.level[4 + m] = _mm512_permutex2var_epi16(upper_by_count[2 * m], lower_words(), upper_by_count[2 * m + 1]);
  }
  out.upper.root = _mm512_permutexvar_epi16(_mm512_set1_epi16(1), out.upper.level[0]);
  keys::code_bytes<8>(table, out.upper.codes);
  return true;
}

BITPARITY_KEYS_TARGET inline bool upper_half_keys(const CodeTable& table, float absmax, UpperHalfKeys& out) {
  if (table.first_step != 128) return false;
  return bounds_in_fp32(table, absmax) ? upper_half_keys_of<true>(table, absmax, out) : upper_half_keys_of<false>(table, absmax, out);
}

// The low bytes of two vectors of positions in input order, their words holding inputs 0, 16, 1,
// 17, .., 15, 31 and 32, 48, .., 47, 63.
BITPARITY_KEYS_TARGET inline __m512i interleaved_position_bytes() {
  alignas(64) static constexpr std::uint8_t kBytes[64] = {
      0,  4,  8,  12, 16, 20, 24, 28, 32, 36, 40, 44, 48,  52,  56,  60,  2,   6,   10,  14,  18,  22,
      26, 30, 34, 38, 42, 46, 50, 54, 58, 62, 64, 68, 72,  76,  80,  84,  88,  92,  96,  100, 104, 108,
      112, 116, 120, 124, 66, 70, 74, 78, 82, 86, 90, 94, 98, 102, 106, 110, 114, 118, 122, 126};
  return _mm512_load_si512(kBytes);
}

// The search's levels from `Level`, each vector's smallest difference (unsigned) kept: 0 where a
// compared key's upper half equals the input's.
template <int Level, int N>
BITPARITY_KEYS_TARGET inline void levels_tracking_ties_from(const keys::NarrowLevelRegisters& r, __m512i (&position)[N],
                                                            __m512i (&smallest)[N], const __m512i (&key)[N]) {
  if constexpr (Level < 8) {
    for (int v = 0; v < N; ++v) {
      const __m512i difference = _mm512_subs_epi16(keys::level_candidate<Level>(r, position[v]), key[v]);
      position[v] = _mm512_shldi_epi16(position[v], difference, 1);
      smallest[v] = _mm512_min_epu16(smallest[v], difference);
    }
    levels_tracking_ties_from<Level + 1>(r, position, smallest, key);
  }
}

// The codes of 32 * N inputs (2N vectors of 16 patterns, N even) as N / 2 vectors of bytes. Each
// pair of input vectors becomes one vector of upper halves and one of lower halves, the pair's
// lanes interleaved (word 2i from the first, 2i + 1 from the second); the byte permute that gathers
// the final positions puts them back in input order.
template <int N>
BITPARITY_KEYS_TARGET inline void codes_by_upper_halves(const UpperHalfKeys& k, const __m512i (&bits)[2 * N], __m512i (&codes)[N / 2]) {
  __m512i upper[N], lower[N], position[N], smallest[N];
  for (int v = 0; v < N; ++v) {
    const __m512i first = signed_order_keys(bits[2 * v]), second = signed_order_keys(bits[2 * v + 1]);
    upper[v] = _mm512_mask_blend_epi16(0xAAAAAAAAu, _mm512_srli_epi32(first, 16), second);
    lower[v] = _mm512_mask_blend_epi16(0xAAAAAAAAu, first, _mm512_slli_epi32(second, 16));
    const __m512i difference = _mm512_subs_epi16(k.upper.root, upper[v]);  // level 0
    position[v] = _mm512_shldi_epi16(_mm512_set1_epi16(1), difference, 1);
    smallest[v] = difference;
  }
  levels_tracking_ties_from<1>(k.upper, position, smallest, upper);
  for (int v = 0; v < N; ++v) {
    const __mmask32 bit6 = _mm512_test_epi16_mask(position[v], _mm512_set1_epi16(64));
    const __mmask32 bit7 = _mm512_test_epi16_mask(position[v], _mm512_set1_epi16(128));
    const __mmask32 tie = _mm512_cmpeq_epi16_mask(smallest[v], _mm512_setzero_si512());
    const __mmask32 below = _mm512_mask_cmplt_epu16_mask(tie, word_by_count(k.lower_by_count, position[v], bit6, bit7), lower[v]);
    position[v] = _mm512_mask_add_epi16(position[v], below, position[v], _mm512_set1_epi16(1));
  }
  for (int v = 0; v < N / 2; ++v) {
    const __m512i index = _mm512_permutex2var_epi8(position[2 * v], interleaved_position_bytes(), position[2 * v + 1]);
    codes[v] = keys::codes_of_positions<8>(k.upper.codes, index);
  }
}

BITPARITY_KEYS_TARGET inline void codes_by_upper_halves(const UpperHalfKeys& k, const float* in, std::int64_t count,
                                                        std::uint8_t* codes) {
  std::int64_t first = 0;
  for (; first + 256 <= count; first += 256) {
    __m512i bits[16];
    for (int v = 0; v < 16; ++v) bits[v] = _mm512_loadu_si512(in + first + 16 * v);
    __m512i code[4];
    codes_by_upper_halves<8>(k, bits, code);
    for (int v = 0; v < 4; ++v) _mm512_storeu_si512(codes + first + 64 * v, code[v]);
  }
  for (; first < count; first += 64) {
    __m512i bits[4];
    const int rest = load_up_to_64(in, first, count, bits);
    __m512i code[1];
    codes_by_upper_halves<2>(k, bits, code);
    store_up_to_64(8, codes, first, rest, code[0]);
  }
}

template <int Levels>
BITPARITY_KEYS_TARGET void codes_by_keys(const CodeTable& table, float absmax, int bits_per_code, const float* in,
                                         std::int64_t count, std::uint8_t* codes) {
  if constexpr (Levels == 8) {
    UpperHalfKeys upper;
    if (upper_half_keys(table, absmax, upper)) {
      codes_by_upper_halves(upper, in, count, codes);
      return;
    }
  }
  LevelRegisters r;
  level_registers<Levels>(table, absmax, r);
  if (float_bits(absmax) > kLargestSignedKeysAbsmax) {
    codes_by_keys<Levels, false>(r, bits_per_code, in, count, codes);
    return;
  }
  for (int k = 0; k < ((1 << Levels) + 15) / 16; ++k) r.level[k] = clamped_signed_keys(r.level[k]);
  r.root = clamped_signed_keys(r.root);
  codes_by_keys<Levels, true>(r, bits_per_code, in, count, codes);
}

BITPARITY_KEYS_TARGET void codes_of_block(const CodeTable& table, float absmax, const float* in, std::int64_t count,
                                          std::uint8_t* codes) {
  switch (table.first_step) {
    case 1: codes_by_keys<1>(table, absmax, table.bits, in, count, codes); break;
    case 2: codes_by_keys<2>(table, absmax, table.bits, in, count, codes); break;
    case 4: codes_by_keys<3>(table, absmax, table.bits, in, count, codes); break;
    case 8: codes_by_keys<4>(table, absmax, table.bits, in, count, codes); break;
    case 16: codes_by_keys<5>(table, absmax, table.bits, in, count, codes); break;
    case 32: codes_by_keys<6>(table, absmax, table.bits, in, count, codes); break;
    case 64: codes_by_keys<7>(table, absmax, table.bits, in, count, codes); break;
    default: codes_by_keys<8>(table, absmax, table.bits, in, count, codes); break;
  }
}

// A block scanned for its search (input_keys_cpu.cpp's ScannedBlock on fp32).
struct ScannedBlock {
  const float* in;
  std::int64_t count;
  std::uint8_t* codes;
  float absmax;
};

// Block `block` scanned, its absmax and flag stored; false, having written nothing, where the body
// must take the block (as input_keys_cpu.cpp's scan_block).
BITPARITY_KEYS_TARGET inline bool scan_block(const CodeTable& table, const QuantizeParams& p, std::int64_t block, ScannedBlock& out) {
  const std::int64_t begin = block_begin(block, p.blocksize);
  const std::int64_t end = block_end(block, p.blocksize, p.numel);
  if (table.bits == 4 && begin % 2 != 0) return false;
  if (end - begin < 2 * table.first_step) return false;
  const float* in = static_cast<const float*>(p.input) + p.input_index.offset + begin;
  const std::int64_t count = end - begin;
  // The largest magnitude pattern: the absmax, or a NaN or infinity (the body's path takes those).
  // Two running maxima, so that the loads' maxima do not all wait on one chain.
  const __m512i magnitude_bits = _mm512_set1_epi32(0x7FFFFFFF);
  __m512i largest[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
  std::int64_t i = 0;
  for (; i + 32 <= count; i += 32) {
    for (int k = 0; k < 2; ++k) {
      largest[k] = _mm512_max_epu32(largest[k], _mm512_and_si512(_mm512_loadu_si512(in + i + 16 * k), magnitude_bits));
    }
  }
  for (; i + 16 <= count; i += 16) largest[0] = _mm512_max_epu32(largest[0], _mm512_and_si512(_mm512_loadu_si512(in + i), magnitude_bits));
  if (i < count) {
    const __m512i tail = _mm512_maskz_loadu_epi32(static_cast<__mmask16>((1u << (count - i)) - 1u), in + i);
    largest[1] = _mm512_max_epu32(largest[1], _mm512_and_si512(tail, magnitude_bits));
  }
  const auto magnitude = static_cast<std::uint32_t>(_mm512_reduce_max_epu32(_mm512_max_epu32(largest[0], largest[1])));
  if (magnitude == 0 || magnitude >= 0x7F800000u) return false;
  out = ScannedBlock{in, count, p.codes + (table.bits == 8 ? begin : begin / 2),
                     finish_block(p, block, BlockScan{float_from_bits(magnitude), false})};
  return true;
}

// The input of a block a few ahead of the one being searched, requested from memory: without it
// each thread's loads of the next block's scan waited on memory with little else in flight (fp32
// quantize at 2^24 on two threads, 4 blocks ahead: 8 % faster than none, 2 or 8; f16 and bf16
// blocks, half the bytes, measured no gain).
constexpr std::int64_t kPrefetchBlocks = 4;
inline void prefetch_block_input(const QuantizeParams& p, std::int64_t block) {
  const std::int64_t begin = block_begin(block, p.blocksize);
  const std::int64_t end = block_end(block, p.blocksize, p.numel);
  const char* const in = reinterpret_cast<const char*>(static_cast<const float*>(p.input) + p.input_index.offset + begin);
  for (std::int64_t at = 0; at < 4 * (end - begin); at += 64) __builtin_prefetch(in + at);
}

// Blocks [first, last) until one the body must take, the next block's scan before this block's
// keys and search (input_keys_cpu.cpp's quantize_blocks_by_keys_of).
template <int Levels>
BITPARITY_KEYS_TARGET std::int64_t quantize_blocks_by_keys_of(const CodeTable& table, const QuantizeParams& p, std::int64_t first,
                                                              std::int64_t last) {
  ScannedBlock current{}, next{};
  if (first == last || !scan_block(table, p, first, current)) return first;
  for (std::int64_t block = first;; ++block) {
    if (block + kPrefetchBlocks < last) prefetch_block_input(p, block + kPrefetchBlocks);
    const bool scanned_next = block + 1 < last && scan_block(table, p, block + 1, next);
    codes_by_keys<Levels>(table, current.absmax, table.bits, current.in, current.count, current.codes);
    if (!scanned_next) return block + 1;
    current = next;
  }
}

BITPARITY_KEYS_TARGET std::int64_t quantize_f32_blocks_by_keys(const CodeTable& table, const QuantizeParams& p, std::int64_t first,
                                                               std::int64_t last) {
  switch (table.first_step) {
    case 1: return quantize_blocks_by_keys_of<1>(table, p, first, last);
    case 2: return quantize_blocks_by_keys_of<2>(table, p, first, last);
    case 4: return quantize_blocks_by_keys_of<3>(table, p, first, last);
    case 8: return quantize_blocks_by_keys_of<4>(table, p, first, last);
    case 16: return quantize_blocks_by_keys_of<5>(table, p, first, last);
    case 32: return quantize_blocks_by_keys_of<6>(table, p, first, last);
    case 64: return quantize_blocks_by_keys_of<7>(table, p, first, last);
    default: return quantize_blocks_by_keys_of<8>(table, p, first, last);
  }
}

// The level keys at positions 1 .. 2 * first_step - 1 (input_threshold_keys' layout), the rest
// 0xFFFFFFFF.
BITPARITY_KEYS_TARGET void threshold_keys(const CodeTable& table, float absmax, std::uint32_t* keys) {
  LevelRegisters r;
  level_registers<8>(table, absmax, r);
  alignas(64) std::uint32_t computed[kLevelKeys];
  for (int k = 0; k < 16; ++k) _mm512_store_si512(computed + 16 * k, r.level[k]);
  for (int i = 0; i < kLevelKeys; ++i) keys[i] = i > 0 && i < 2 * table.first_step ? computed[i] : 0xFFFFFFFFu;
}

}  // namespace

std::int64_t quantize_f32_blocks_by_keys_avx512(const CodeTable& table, const QuantizeParams& p, std::int64_t first,
                                                std::int64_t last) {
  return quantize_f32_blocks_by_keys(table, p, first, last);
}

bool codes_of_f32_by_keys(const CodeTable& table, const float* values, float absmax, std::uint8_t* codes,
                          std::int64_t count) {
  if (!cpu_has_avx512vbmi2() || table.bits != 8 || count < 2 * table.first_step) return false;
  if (!(absmax > 0) || !(absmax <= std::numeric_limits<float>::max())) return false;
  codes_of_block(table, absmax, values, count, codes);
  return true;
}

bool f32_upper_half_search_applies(const CodeTable& table, float absmax) {
  UpperHalfKeys upper;
  return cpu_has_avx512vbmi2() && upper_half_keys(table, absmax, upper);
}

bool input_threshold_keys_f32_vector(const CodeTable& table, float absmax, std::uint32_t* keys) {
  if (!cpu_has_avx512vbmi2()) return false;
  threshold_keys(table, absmax, keys);
  return true;
}

#else

std::int64_t quantize_f32_blocks_by_keys_avx512(const CodeTable&, const QuantizeParams&, std::int64_t first, std::int64_t) {
  return first;
}
bool input_threshold_keys_f32_vector(const CodeTable&, float, std::uint32_t*) { return false; }
bool f32_upper_half_search_applies(const CodeTable&, float) { return false; }
bool codes_of_f32_by_keys(const CodeTable&, const float*, float, std::uint8_t*, std::int64_t) { return false; }

#endif

}  // namespace bitparity::cpu
