#include "nibble_select_cpu.hpp"

#include <cstring>

#if defined(__x86_64__)
#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 warns about the intrinsics' own undefined pass-through operands (input_keys_cpu.cpp).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#endif

namespace bitparity::cpu {

// GCC's vector extensions: __builtin_shuffle with a variable mask compiles to vpermw / vpermps.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)

namespace {
using Bytes16 = std::uint8_t __attribute__((vector_size(16)));
using Bytes32 = std::uint8_t __attribute__((vector_size(32)));
using Words32 = std::uint16_t __attribute__((vector_size(64)));
using Ints16 = std::int32_t __attribute__((vector_size(64)));
using Floats16 = float __attribute__((vector_size(64)));
}  // namespace

__attribute__((target("arch=x86-64-v4"))) std::int64_t select_by_nibbles_avx512(const std::uint16_t* of_code,
                                                                               const std::uint8_t* codes,
                                                                               std::uint16_t* out, std::int64_t bytes) {
  // The 16 words twice (a permute index is taken modulo 32), by one load and a broadcast: built
  // word by word, the table's load waited for 32 stores to retire, half of a 4-bit f16 block's time.
  Words32 table;
  const __m512i twice = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(of_code)));
  std::memcpy(&table, &twice, sizeof table);
  // Output 2j takes byte j's high nibble, output 2j + 1 its low one.
  constexpr Words32 first_half = {0, 32, 1, 33, 2, 34, 3, 35, 4, 36, 5, 37, 6, 38, 7, 39,
                                  8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
  constexpr Words32 second_half = first_half + 16;
  std::int64_t j = 0;
  for (; j + 32 <= bytes; j += 32) {
    Bytes32 packed;
    std::memcpy(&packed, codes + j, sizeof packed);
    const Words32 wide = __builtin_convertvector(packed, Words32);
    const Words32 high = wide >> 4, low = wide & 0x0F;
    const Words32 first = __builtin_shuffle(table, __builtin_shuffle(high, low, first_half));
    const Words32 second = __builtin_shuffle(table, __builtin_shuffle(high, low, second_half));
    std::memcpy(out + 2 * j, &first, sizeof first);
    std::memcpy(out + 2 * j + 32, &second, sizeof second);
  }
  return j;
}

__attribute__((target("arch=x86-64-v4"))) std::int64_t select_by_nibbles_avx512(const float* of_code,
                                                                               const std::uint8_t* codes, float* out,
                                                                               std::int64_t bytes) {
  Floats16 table;
  std::memcpy(&table, of_code, sizeof table);
  constexpr Ints16 first_half = {0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23};
  constexpr Ints16 second_half = first_half + 8;
  std::int64_t j = 0;
  for (; j + 16 <= bytes; j += 16) {
    Bytes16 packed;
    std::memcpy(&packed, codes + j, sizeof packed);
    const Ints16 wide = __builtin_convertvector(packed, Ints16);
    const Ints16 high = wide >> 4, low = wide & 0x0F;
    const Floats16 first = __builtin_shuffle(table, __builtin_shuffle(high, low, first_half));
    const Floats16 second = __builtin_shuffle(table, __builtin_shuffle(high, low, second_half));
    std::memcpy(out + 2 * j, &first, sizeof first);
    std::memcpy(out + 2 * j + 16, &second, sizeof second);
  }
  return j;
}

// The 32 table indices of 16 code bytes in output order (high nibble, then low, byte by byte):
// outputs 0-15 in the low half, 16-31 in the high half.
__attribute__((target("arch=x86-64-v3"))) inline __m256i nibbles_in_output_order(const std::uint8_t* codes) {
  const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes));
  const __m128i nibble = _mm_set1_epi8(0x0F);
  const __m128i high = _mm_and_si128(_mm_srli_epi16(packed, 4), nibble), low = _mm_and_si128(packed, nibble);
  return _mm256_set_m128i(_mm_unpackhi_epi8(high, low), _mm_unpacklo_epi8(high, low));
}

__attribute__((target("arch=x86-64-v3"))) std::int64_t select_by_nibbles_avx2(const std::uint16_t* of_code,
                                                                             const std::uint8_t* codes,
                                                                             std::uint16_t* out, std::int64_t bytes) {
  // The table's low and high bytes as two 16-byte shuffle tables, in both 128-bit lanes, split in
  // registers (a byte shuffle per lane, then the lanes' halves gathered): built byte by byte in
  // memory, their loads would wait for the stores to retire (select_by_nibbles_avx512).
  const __m256i words = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(of_code));
  const __m256i split = _mm256_shuffle_epi8(words, _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15, 0, 2,
                                                                    4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15));
  const __m256i low_table = _mm256_permute4x64_epi64(split, 0x88);  // quadwords 0, 2, 0, 2
  const __m256i high_table = _mm256_permute4x64_epi64(split, 0xDD);  // quadwords 1, 3, 1, 3
  std::int64_t j = 0;
  for (; j + 16 <= bytes; j += 16) {
    const __m256i index = nibbles_in_output_order(codes + j);
    const __m256i low = _mm256_shuffle_epi8(low_table, index), high = _mm256_shuffle_epi8(high_table, index);
    // Per 128-bit lane, unpacklo joins outputs 0-7 (16-23 in the high lane), unpackhi 8-15 (24-31).
    const __m256i first = _mm256_unpacklo_epi8(low, high), second = _mm256_unpackhi_epi8(low, high);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 2 * j), _mm256_permute2x128_si256(first, second, 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 2 * j + 16), _mm256_permute2x128_si256(first, second, 0x31));
  }
  return j;
}

__attribute__((target("arch=x86-64-v3"))) std::int64_t select_by_nibbles_avx2(const float* of_code,
                                                                             const std::uint8_t* codes, float* out,
                                                                             std::int64_t bytes) {
  const __m256 lower = _mm256_loadu_ps(of_code), upper = _mm256_loadu_ps(of_code + 8);
  std::int64_t j = 0;
  for (; j + 16 <= bytes; j += 16) {
    const __m256i index = nibbles_in_output_order(codes + j);
    alignas(32) std::uint8_t indices[32];
    _mm256_store_si256(reinterpret_cast<__m256i*>(indices), index);
    for (int group = 0; group < 4; ++group) {  // 8 outputs each
      const __m256i i = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(indices + 8 * group)));
      // vpermps reads an index's low 3 bits; bit 3, shifted to the sign, picks the half.
      const __m256 words = _mm256_blendv_ps(_mm256_permutevar8x32_ps(lower, i), _mm256_permutevar8x32_ps(upper, i),
                                            _mm256_castsi256_ps(_mm256_slli_epi32(i, 28)));
      _mm256_storeu_ps(out + 2 * j + 8 * group, words);
    }
  }
  return j;
}

#else

std::int64_t select_by_nibbles_avx2(const std::uint16_t*, const std::uint8_t*, std::uint16_t*, std::int64_t) { return 0; }
std::int64_t select_by_nibbles_avx2(const float*, const std::uint8_t*, float*, std::int64_t) { return 0; }
std::int64_t select_by_nibbles_avx512(const std::uint16_t*, const std::uint8_t*, std::uint16_t*, std::int64_t) { return 0; }
std::int64_t select_by_nibbles_avx512(const float*, const std::uint8_t*, float*, std::int64_t) { return 0; }

#endif

}  // namespace bitparity::cpu
