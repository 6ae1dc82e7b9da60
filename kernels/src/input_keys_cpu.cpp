#include "input_keys_cpu.hpp"

#include "bitparity/kernels/input_keys.hpp"
#include "input_keys_avx512.hpp"

namespace bitparity::cpu {

#if defined(BITPARITY_AVX512_KEYS)

namespace {

using keys::CodeBytes;

// The search compares keys as signed 16-bit numbers (level_step): narrow_order_key with its top bit
// flipped, so the order of the patterns is the order of the signed lanes. On 32 lanes: a negative
// pattern's other 15 bits inverted, a positive one's kept.
BITPARITY_KEYS_TARGET inline __m512i signed_order_keys(__m512i bits) {
  return _mm512_xor_si512(bits, _mm512_and_si512(_mm512_srai_epi16(bits, 15), _mm512_set1_epi16(0x7FFF)));
}

// input_threshold_key of the level entries at search positions [first, first + 16). The key of a
// closed edge is the largest D value at most the bound B = edge * absmax: B rounded toward -inf
// (exact in double; to fp32, then to D: directed roundings compose, D's values being fp32 values).
// The key of an open edge is the largest D value below B, the predecessor of B rounded toward +inf,
// which is -(-B rounded toward -inf): the table holds open edges negated
// (key_bounds_by_position), so one rounding serves both, and negation and predecessor are
// ~key - 1 on order keys. No test for exactness either way. Where the block allows (BoundsInFp32:
// absmax * smallest_half_gap >= 2^-126), the bound is the fp32 fma threshold * absmax + half_gap *
// absmax rounded once toward -inf, the last product being exact: the same fp32 value as the double's
// rounding, in half the lanes' work. Each position's bound has a known sign, so the rounded
// pattern becomes its key by the position's xor and step (CodeTable::narrow_key_flips_by_position),
// with no test of the sign or of openness per block.
struct BlockScale {
  __m512d wide;
  __m512 narrow;
};

template <bool BoundsInFp32>
BITPARITY_KEYS_TARGET inline __m512 rounded_bounds_16(const CodeTable& table, int first, const BlockScale& absmax) {
  constexpr int kDown = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
  if constexpr (BoundsInFp32) {
    const __m512 half_gap = _mm512_mul_ps(_mm512_loadu_ps(table.key_half_gaps_by_position + first), absmax.narrow);
    return _mm512_fmadd_round_ps(_mm512_loadu_ps(table.key_thresholds_by_position + first), absmax.narrow, half_gap, kDown);
  } else {
    const __m512d bound_low = _mm512_mul_pd(_mm512_loadu_pd(table.key_bounds_by_position + first), absmax.wide);
    const __m512d bound_high = _mm512_mul_pd(_mm512_loadu_pd(table.key_bounds_by_position + first + 8), absmax.wide);
    return _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvt_roundpd_ps(bound_low, kDown)),
                              _mm512_cvt_roundpd_ps(bound_high, kDown), 1);
  }
}

// The keys of positions [first, first + 32), built 32 lanes at a time after the fp32 bounds.
template <DType D, bool BoundsInFp32>
BITPARITY_KEYS_TARGET inline __m512i threshold_keys_32(const CodeTable& table, int first, const BlockScale& absmax) {
  const __m512 low = rounded_bounds_16<BoundsInFp32>(table, first, absmax);
  const __m512 high = rounded_bounds_16<BoundsInFp32>(table, first + 16, absmax);
  __m512i narrow;
  if constexpr (D == DType::f16) {
    narrow = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtps_ph(low, _MM_FROUND_TO_NEG_INF)),
                                _mm512_cvtps_ph(high, _MM_FROUND_TO_NEG_INF), 1);
  } else {
    // bf16 is fp32's upper half: toward -inf drops a positive value's lower half and steps a
    // negative one's magnitude up where its lower half is nonzero. One permute takes the upper
    // halves of both registers' lanes.
    const __m512i up_low = _mm512_add_epi32(_mm512_castps_si512(low), _mm512_loadu_si512(table.bf16_round_ups_by_position + first));
    const __m512i up_high =
        _mm512_add_epi32(_mm512_castps_si512(high), _mm512_loadu_si512(table.bf16_round_ups_by_position + first + 16));
    const __m512i upper_halves = _mm512_set_epi16(63, 61, 59, 57, 55, 53, 51, 49, 47, 45, 43, 41, 39, 37, 35, 33, 31, 29, 27,
                                                  25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    narrow = _mm512_permutex2var_epi16(up_low, upper_halves, up_high);
  }
  const __m512i flip = _mm512_loadu_si512(table.narrow_key_flips_by_position + first);
  const __m512i step = _mm512_loadu_si512(table.narrow_key_steps_by_position + first);
  return _mm512_add_epi16(_mm512_xor_si512(narrow, flip), step);
}

using LevelRegisters = keys::NarrowLevelRegisters;

// The registers' keys as the search compares them (signed_order_keys), padding 0x7FFF.
template <int Levels>
BITPARITY_KEYS_TARGET inline void flip_to_signed_keys(LevelRegisters& r) {
  const __m512i top_bit = _mm512_set1_epi16(INT16_MIN);
  for (int k = 0; k < ((1 << Levels) + 31) / 32; ++k) r.level[k] = _mm512_xor_si512(r.level[k], top_bit);
  r.root = _mm512_xor_si512(r.root, top_bit);
}

template <DType D, int Levels, bool BoundsInFp32>
BITPARITY_KEYS_TARGET void level_registers_of(const CodeTable& table, const BlockScale& absmax, LevelRegisters& r) {
  constexpr int kPositions = 1 << Levels;  // position 0 and the 2^Levels - 1 entries
  // Positions past the levels (a 4-bit map's first register) are never compared: padding edges are
  // +inf, whose keys lie above every finite input.
  for (int k = 0; k < (kPositions + 31) / 32; ++k) r.level[k] = threshold_keys_32<D, BoundsInFp32>(table, 32 * k, absmax);
  if constexpr (kPositions <= 16) r.level[0] = _mm512_mask_mov_epi16(r.level[0], 0xFFFF0000u, _mm512_set1_epi16(-1));
}

BITPARITY_KEYS_TARGET inline bool bounds_in_fp32(const CodeTable& table, float absmax) {
  return static_cast<double>(absmax) * static_cast<double>(table.smallest_half_gap) >= 0x1p-126;
}

template <DType D, int Levels>
BITPARITY_KEYS_TARGET void level_registers(const CodeTable& table, float absmax, LevelRegisters& r) {
  const BlockScale scale{_mm512_set1_pd(static_cast<double>(absmax)), _mm512_set1_ps(absmax)};
  if (bounds_in_fp32(table, absmax)) {
    level_registers_of<D, Levels, true>(table, scale, r);
  } else {
    level_registers_of<D, Levels, false>(table, scale, r);
  }
  r.root = _mm512_permutexvar_epi16(_mm512_set1_epi16(1), r.level[0]);
  keys::code_bytes<Levels>(table, r.codes);
}

// A bf16 block's level registers from the keys at its absmax's significand (`row`), each moving key
// moved by `shift` binades (Bf16KeysByMantissa): one multiply-add per register.
struct MovedRow {
  const Bf16KeysByMantissa* keys;
  int row;
  int shift;
};

template <int Levels>
BITPARITY_KEYS_TARGET void moved_level_registers(const CodeTable& table, const MovedRow& moved, LevelRegisters& r) {
  constexpr int kPositions = 1 << Levels;
  const __m512i binades = _mm512_set1_epi16(static_cast<short>(moved.shift * 128));
  for (int k = 0; k < (kPositions + 31) / 32; ++k) {
    const __m512i keys = _mm512_load_si512(moved.keys->keys[moved.row] + 32 * k);
    r.level[k] = _mm512_add_epi16(keys, _mm512_mullo_epi16(_mm512_load_si512(moved.keys->signs + 32 * k), binades));
  }
  r.root = _mm512_permutexvar_epi16(_mm512_set1_epi16(1), r.level[0]);
  keys::code_bytes<Levels>(table, r.codes);
}

// The rows of Bf16KeysByMantissa: the level registers at absmax 1 + row/128, as the blocks compute them.
template <int Levels>
BITPARITY_KEYS_TARGET void rows_of_keys(const CodeTable& table, Bf16KeysByMantissa& out) {
  constexpr int kRegisters = ((1 << Levels) + 31) / 32;
  for (int row = 0; row < 128; ++row) {
    LevelRegisters r;
    level_registers<DType::bf16, Levels>(table, bf16_to_float(static_cast<std::uint16_t>(0x3F80 + row)), r);
    for (int k = 0; k < 8; ++k) _mm512_store_si512(out.keys[row] + 32 * k, k < kRegisters ? r.level[k] : _mm512_set1_epi16(-1));
  }
}

// The block's row and shift where its absmax pattern (positive, finite) lies in the range the keys
// move over: every moved key's exponent field in [2, 253], a binade clear of the subnormals (whose
// spacing does not scale) and of the infinities.
BITPARITY_KEYS_TARGET inline bool moved_row_of(const Bf16KeysByMantissa& keys, std::uint16_t absmax_bits, MovedRow& out) {
  const int exponent = absmax_bits >> 7;
  if (!keys.usable || exponent == 0) return false;
  const int shift = exponent - 127;
  if (keys.lowest_exponent + shift < 2 || keys.highest_exponent + shift > 253) return false;
  out = MovedRow{&keys, absmax_bits & 0x7F, shift};
  return true;
}

// The level keys at positions 1 .. 2 * first_step - 1 (input_threshold_keys' layout), 0xFFFF at 0.
template <DType D, bool BoundsInFp32>
BITPARITY_KEYS_TARGET void threshold_keys_of(const CodeTable& table, float absmax, std::uint16_t* keys) {
  const BlockScale scale{_mm512_set1_pd(static_cast<double>(absmax)), _mm512_set1_ps(absmax)};
  const int positions = 2 * table.first_step;
  alignas(64) std::uint16_t computed[kLevelKeys];
  for (int first = 0; first < positions; first += 32) _mm512_store_si512(computed + first, threshold_keys_32<D, BoundsInFp32>(table, first, scale));
  keys[0] = 0xFFFFu;
  for (int i = 1; i < positions; ++i) keys[i] = computed[i];
}

template <DType D>
BITPARITY_KEYS_TARGET void threshold_keys(const CodeTable& table, float absmax, std::uint16_t* keys) {
  if (bounds_in_fp32(table, absmax)) {
    threshold_keys_of<D, true>(table, absmax, keys);
  } else {
    threshold_keys_of<D, false>(table, absmax, keys);
  }
}

using keys::levels_from;
using keys::next_position;

template <int Levels>
BITPARITY_KEYS_TARGET inline __m512i codes_of_positions(const LevelRegisters& r, __m512i low, __m512i high) {
  return keys::codes_of_narrow_positions<Levels>(r.codes, low, high);
}

// The codes of 32 * N inputs (N vectors of patterns, N even) as N / 2 vectors of bytes.
template <int Levels, int N>
BITPARITY_KEYS_TARGET inline void codes_of(const LevelRegisters& r, const __m512i (&bits)[N], __m512i (&codes)[N / 2]) {
  __m512i key[N], position[N];
  for (int v = 0; v < N; ++v) {
    key[v] = signed_order_keys(bits[v]);
    position[v] = next_position(_mm512_set1_epi16(1), r.root, key[v]);  // level 0
  }
  levels_from<1, Levels>(r, position, key);
  for (int v = 0; v < N / 2; ++v) codes[v] = codes_of_positions<Levels>(r, position[2 * v], position[2 * v + 1]);
}

template <int Levels>
BITPARITY_KEYS_TARGET inline __m512i codes_of_64(const LevelRegisters& r, __m512i bits_low, __m512i bits_high) {
  const __m512i bits[2] = {bits_low, bits_high};
  __m512i codes[1];
  codes_of<Levels>(r, bits, codes);
  return codes[0];
}

// A block scanned for its search: its inputs, their count, where its codes go, its absmax and the
// absmax's pattern.
struct ScannedBlock {
  const std::uint16_t* in;
  std::int64_t count;
  std::uint8_t* codes;
  float absmax;
  std::uint16_t magnitude;
};

// The largest magnitude pattern of `count` 16-bit inputs (scan_contiguous on patterns): magnitudes
// order as values, and NaN and infinity have the largest, so it is the absmax or says the block is
// not finite.
BITPARITY_KEYS_TARGET inline std::uint16_t largest_magnitude(const std::uint16_t* in, std::int64_t count) {
  const __m512i magnitude_bits = _mm512_set1_epi16(0x7FFF);
  // Two running maxima, so that the loads' maxima do not all wait on one chain.
  __m512i largest[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
  std::int64_t i = 0;
  for (; i + 64 <= count; i += 64) {
    for (int k = 0; k < 2; ++k) {
      largest[k] = _mm512_max_epu16(largest[k], _mm512_and_si512(_mm512_loadu_si512(in + i + 32 * k), magnitude_bits));
    }
  }
  for (; i + 32 <= count; i += 32) largest[0] = _mm512_max_epu16(largest[0], _mm512_and_si512(_mm512_loadu_si512(in + i), magnitude_bits));
  if (i < count) {
    const __m512i tail = _mm512_maskz_loadu_epi16(static_cast<__mmask32>((1u << (count - i)) - 1u), in + i);
    largest[1] = _mm512_max_epu16(largest[1], _mm512_and_si512(tail, magnitude_bits));
  }
  const __m512i both = _mm512_max_epu16(largest[0], largest[1]);
  const __m256i half = _mm256_max_epu16(_mm512_castsi512_si256(both), _mm512_extracti64x4_epi64(both, 1));
  const __m128i quarter = _mm_max_epu16(_mm256_castsi256_si128(half), _mm256_extracti128_si256(half, 1));
  // The largest of eight words is the complement of their complements' smallest (one phminposuw).
  const __m128i smallest_complement = _mm_minpos_epu16(_mm_xor_si128(quarter, _mm_set1_epi16(-1)));
  return static_cast<std::uint16_t>(~_mm_cvtsi128_si32(smallest_complement));
}

// Block `block` scanned, its absmax and flag stored; false, having written nothing, where the body
// must take the block: one with NaN, infinity or only zeros, or shorter than 2 * first_step (where
// the keys cost more than they save: 8-bit maps at 128 elements break even with the fp32 path on
// Zen 5, and lose at 64).
template <DType D>
BITPARITY_KEYS_TARGET inline bool scan_block(const CodeTable& table, const QuantizeParams& p, std::int64_t block, ScannedBlock& out) {
  const std::int64_t begin = block_begin(block, p.blocksize);
  const std::int64_t end = block_end(block, p.blocksize, p.numel);
  if (table.bits == 4 && begin % 2 != 0) return false;
  if (end - begin < 2 * table.first_step) return false;
  const auto* in = static_cast<const std::uint16_t*>(p.input) + p.input_index.offset + begin;
  const std::uint16_t magnitude = largest_magnitude(in, end - begin);
  constexpr std::uint16_t kInfinity = D == DType::f16 ? 0x7C00u : 0x7F80u;
  if (magnitude == 0 || magnitude >= kInfinity) return false;
  const float value = D == DType::f16 ? f16_to_float(magnitude) : bf16_to_float(magnitude);
  out = ScannedBlock{in, end - begin, p.codes + (table.bits == 8 ? begin : begin / 2),
                     finish_block(p, block, BlockScan{value, false}), magnitude};
  return true;
}

// The codes of a scanned block: its keys, then the search.
template <DType D, int Levels>
BITPARITY_KEYS_TARGET inline void codes_by_keys(const CodeTable& table, const ScannedBlock& block,
                                                const Bf16KeysByMantissa* bf16_keys) {
  LevelRegisters r;
  MovedRow row{};
  if (D == DType::bf16 && bf16_keys != nullptr && moved_row_of(*bf16_keys, block.magnitude, row)) {
    moved_level_registers<Levels>(table, row, r);
  } else {
    level_registers<D, Levels>(table, block.absmax, r);
  }
  flip_to_signed_keys<Levels>(r);
  const std::uint16_t* const in = block.in;
  const std::int64_t count = block.count;
  std::uint8_t* const codes = block.codes;
  const int bits_per_code = table.bits;
  std::int64_t first = 0;
  // Eight vectors' searches interleaved per iteration (codes_of).
  for (; first + 256 <= count; first += 256) {
    __m512i bits[8];
    for (int v = 0; v < 8; ++v) bits[v] = _mm512_loadu_si512(in + first + 32 * v);
    __m512i code[4];
    codes_of<Levels>(r, bits, code);
    for (int v = 0; v < 4; ++v) keys::store_codes(bits_per_code, codes, first + 64 * v, code[v]);
  }
  for (; first + 64 <= count; first += 64) {
    keys::store_codes(bits_per_code, codes, first,
                      codes_of_64<Levels>(r, _mm512_loadu_si512(in + first), _mm512_loadu_si512(in + first + 32)));
  }
  if (first == count) return;
  const int rest = static_cast<int>(count - first);
  const __mmask64 valid = (__mmask64{1} << rest) - 1u;
  keys::store_last_codes(bits_per_code, codes, first, rest,
                         codes_of_64<Levels>(r, _mm512_maskz_loadu_epi16(static_cast<__mmask32>(valid), in + first),
                                             _mm512_maskz_loadu_epi16(static_cast<__mmask32>(valid >> 32), in + first + 32)));
}

// Blocks [first, last) until one the body must take, whose index it returns (last where none).
// Software-pipelined: the next block's scan comes before this block's keys and search, so that the
// core works on it while they run. Otherwise a block's keys wait on the end of its scan (a
// reduction of about 25 cycles) with nothing else to do, then its search on its keys.
template <DType D, int Levels>
BITPARITY_KEYS_TARGET std::int64_t quantize_blocks_by_keys_of(const CodeTable& table, const QuantizeParams& p, std::int64_t first,
                                                              std::int64_t last, const Bf16KeysByMantissa* bf16_keys) {
  ScannedBlock current{}, next{};
  if (first == last || !scan_block<D>(table, p, first, current)) return first;
  for (std::int64_t block = first;; ++block) {
    const bool scanned_next = block + 1 < last && scan_block<D>(table, p, block + 1, next);
    codes_by_keys<D, Levels>(table, current, bf16_keys);
    if (!scanned_next) return block + 1;
    current = next;
  }
}

template <DType D>
BITPARITY_KEYS_TARGET std::int64_t quantize_blocks_by_keys_of(const CodeTable& table, const QuantizeParams& p, std::int64_t first,
                                                              std::int64_t last, const Bf16KeysByMantissa* bf16_keys) {
  switch (table.first_step) {
    case 1: return quantize_blocks_by_keys_of<D, 1>(table, p, first, last, bf16_keys);
    case 2: return quantize_blocks_by_keys_of<D, 2>(table, p, first, last, bf16_keys);
    case 4: return quantize_blocks_by_keys_of<D, 3>(table, p, first, last, bf16_keys);
    case 8: return quantize_blocks_by_keys_of<D, 4>(table, p, first, last, bf16_keys);
    case 16: return quantize_blocks_by_keys_of<D, 5>(table, p, first, last, bf16_keys);
    case 32: return quantize_blocks_by_keys_of<D, 6>(table, p, first, last, bf16_keys);
    case 64: return quantize_blocks_by_keys_of<D, 7>(table, p, first, last, bf16_keys);
    default: return quantize_blocks_by_keys_of<D, 8>(table, p, first, last, bf16_keys);
  }
}

BITPARITY_KEYS_TARGET bool build_bf16_keys(const CodeTable& table, Bf16KeysByMantissa& out) {
  switch (table.first_step) {
    case 1: rows_of_keys<1>(table, out); break;
    case 2: rows_of_keys<2>(table, out); break;
    case 4: rows_of_keys<3>(table, out); break;
    case 8: rows_of_keys<4>(table, out); break;
    case 16: rows_of_keys<5>(table, out); break;
    case 32: rows_of_keys<6>(table, out); break;
    case 64: rows_of_keys<7>(table, out); break;
    default: rows_of_keys<8>(table, out); break;
  }
  // Each compared position's key must keep its sign over the rows and be a normal value above the
  // lowest binade (it then moves with the exponent: its neighbours are normal too, so the spacing
  // on either side scales; at -2^-126 the next value toward zero is subnormal, a whole step away
  // where the scaled binade has half a step), or +inf in every row (the padding, which stays).
  int lowest = 255, highest = 0;
  for (int position = 0; position < 256; ++position) out.signs[position] = 0;
  for (int position = 1; position < 2 * table.first_step; ++position) {
    int sign = 0;
    for (int row = 0; row < 128; ++row) {
      const std::uint16_t bits = narrow_bits_of_key(out.keys[row][position]);
      const int exponent = (bits >> 7) & 0xFF;
      if (exponent <= 1 || (exponent == 0xFF && bits != 0x7F80u)) return false;
      const int row_sign = bits == 0x7F80u ? 0 : ((bits & 0x8000u) != 0 ? -1 : 1);
      if (row > 0 && row_sign != sign) return false;
      sign = row_sign;
      if (row_sign != 0) {
        lowest = exponent < lowest ? exponent : lowest;
        highest = exponent > highest ? exponent : highest;
      }
    }
    out.signs[position] = static_cast<std::int16_t>(sign);
  }
  out.lowest_exponent = lowest;
  out.highest_exponent = highest;
  return true;
}

template <int Levels>
BITPARITY_KEYS_TARGET void store_moved_keys(const CodeTable& table, const MovedRow& moved, std::uint16_t* keys) {
  LevelRegisters r;
  moved_level_registers<Levels>(table, moved, r);
  alignas(64) std::uint16_t computed[kLevelKeys];
  for (int k = 0; k < ((1 << Levels) + 31) / 32; ++k) _mm512_store_si512(computed + 32 * k, r.level[k]);
  keys[0] = 0xFFFFu;
  for (int i = 1; i < 2 * table.first_step; ++i) keys[i] = computed[i];
}

}  // namespace

bool build_bf16_keys_by_mantissa(const CodeTable& table, Bf16KeysByMantissa& out) {
  out.usable = false;
  if (!cpu_has_avx512vbmi2()) return false;
  out.usable = build_bf16_keys(table, out);
  return out.usable;
}

bool input_threshold_keys_moved(const CodeTable& table, const Bf16KeysByMantissa& moved, std::uint16_t absmax_bits,
                                std::uint16_t* keys) {
  MovedRow row{};
  if (!cpu_has_avx512vbmi2() || !moved_row_of(moved, absmax_bits, row)) return false;
  switch (table.first_step) {
    case 1: store_moved_keys<1>(table, row, keys); break;
    case 2: store_moved_keys<2>(table, row, keys); break;
    case 4: store_moved_keys<3>(table, row, keys); break;
    case 8: store_moved_keys<4>(table, row, keys); break;
    case 16: store_moved_keys<5>(table, row, keys); break;
    case 32: store_moved_keys<6>(table, row, keys); break;
    case 64: store_moved_keys<7>(table, row, keys); break;
    default: store_moved_keys<8>(table, row, keys); break;
  }
  return true;
}

std::int64_t quantize_blocks_by_keys(const CodeTable& table, const QuantizeParams& p, std::int64_t first, std::int64_t last,
                                     const Bf16KeysByMantissa* bf16_keys) {
  if (!cpu_has_avx512vbmi2() || !p.input_index.contiguous || p.rounding.enabled) return first;
  if (p.input_dtype == DType::f16) return quantize_blocks_by_keys_of<DType::f16>(table, p, first, last, nullptr);
  if (p.input_dtype == DType::bf16) return quantize_blocks_by_keys_of<DType::bf16>(table, p, first, last, bf16_keys);
  if (p.input_dtype == DType::f32) return quantize_f32_blocks_by_keys_avx512(table, p, first, last);
  return first;
}

bool quantize_block_by_keys(const CodeTable& table, const QuantizeParams& p, std::int64_t block,
                            const Bf16KeysByMantissa* bf16_keys) {
  return quantize_blocks_by_keys(table, p, block, block + 1, bf16_keys) == block + 1;
}

bool input_threshold_keys_vector(const CodeTable& table, DType dtype, float absmax, std::uint16_t* keys) {
  if (!cpu_has_avx512vbmi2()) return false;
  if (dtype == DType::f16) {
    threshold_keys<DType::f16>(table, absmax, keys);
  } else if (dtype == DType::bf16) {
    threshold_keys<DType::bf16>(table, absmax, keys);
  } else {
    return false;
  }
  return true;
}

#else

bool build_bf16_keys_by_mantissa(const CodeTable&, Bf16KeysByMantissa& out) {
  out.usable = false;
  return false;
}
bool input_threshold_keys_moved(const CodeTable&, const Bf16KeysByMantissa&, std::uint16_t, std::uint16_t*) { return false; }
std::int64_t quantize_blocks_by_keys(const CodeTable&, const QuantizeParams&, std::int64_t first, std::int64_t,
                                     const Bf16KeysByMantissa*) {
  return first;
}
bool quantize_block_by_keys(const CodeTable&, const QuantizeParams&, std::int64_t, const Bf16KeysByMantissa*) { return false; }
bool input_threshold_keys_vector(const CodeTable&, DType, float, std::uint16_t*) { return false; }

#endif

}  // namespace bitparity::cpu
