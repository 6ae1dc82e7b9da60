#include "code_select_cpu.hpp"

#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// GCC 12 warns about the intrinsics' own undefined pass-through operands (input_keys_cpu.cpp).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#endif

namespace bitparity::cpu {

// GCC's vector extensions: __builtin_shuffle of two registers with a variable mask compiles to
// vpermt2w, which reads each index modulo 64.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)

namespace {
using Bytes32 = std::uint8_t __attribute__((vector_size(32)));
using Words32 = std::uint16_t __attribute__((vector_size(64)));
}  // namespace

#define BITPARITY_PLANES_TARGET __attribute__((target("avx512f,avx512bw,avx512vbmi")))

namespace {

// The table as two byte planes, low and high bytes of the words, 64 codes per register.
struct BytePlanes {
  __m512i low[4], high[4];
};

BITPARITY_PLANES_TARGET inline void byte_planes_of(const std::uint16_t* of_code, BytePlanes& planes) {
  alignas(64) static constexpr std::uint8_t kEvenBytes[64] = {
      0,  2,  4,  6,  8,  10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32,  34,  36,  38,  40,  42,
      44, 46, 48, 50, 52, 54, 56, 58, 60, 62, 64, 66, 68, 70, 72, 74, 76, 78, 80, 82, 84,  86,
      88, 90, 92, 94, 96, 98, 100, 102, 104, 106, 108, 110, 112, 114, 116, 118, 120, 122, 124, 126};
  const __m512i even = _mm512_load_si512(kEvenBytes);
  const __m512i odd = _mm512_add_epi8(even, _mm512_set1_epi8(1));
  for (int q = 0; q < 4; ++q) {
    const __m512i first = _mm512_loadu_si512(of_code + 64 * q), second = _mm512_loadu_si512(of_code + 64 * q + 32);
    planes.low[q] = _mm512_permutex2var_epi8(first, even, second);
    planes.high[q] = _mm512_permutex2var_epi8(first, odd, second);
  }
}

// One plane's bytes of 64 codes: the half of the plane by bit 7, the byte by bits 0-6.
BITPARITY_PLANES_TARGET inline __m512i plane_bytes(const __m512i (&plane)[4], __m512i code, __mmask64 bit7) {
  return _mm512_mask_blend_epi8(bit7, _mm512_permutex2var_epi8(plane[0], code, plane[1]),
                                _mm512_permutex2var_epi8(plane[2], code, plane[3]));
}

// The words of 64 codes per iteration from the byte planes: two byte permutes per plane, where the
// word selection takes four word permutes per 32 codes. The codes are first rearranged so that the
// in-lane unpacks of the two planes' bytes give the words in order: lane k of the rearranged codes
// holds codes 8k to 8k + 7 (unpacked into the first 32 words) and 32 + 8k to 32 + 8k + 7 (the next).
BITPARITY_PLANES_TARGET std::int64_t select_by_byte_planes(const std::uint16_t* of_code, const std::uint8_t* codes,
                                                           std::uint16_t* out, std::int64_t count) {
  alignas(64) static constexpr std::uint8_t kUnpackOrder[64] = {
      0,  1,  2,  3,  4,  5,  6,  7,  32, 33, 34, 35, 36, 37, 38, 39, 8,  9,  10, 11, 12, 13,
      14, 15, 40, 41, 42, 43, 44, 45, 46, 47, 16, 17, 18, 19, 20, 21, 22, 23, 48, 49, 50, 51,
      52, 53, 54, 55, 24, 25, 26, 27, 28, 29, 30, 31, 56, 57, 58, 59, 60, 61, 62, 63};
  BytePlanes planes;
  byte_planes_of(of_code, planes);
  const __m512i unpack_order = _mm512_load_si512(kUnpackOrder);
  std::int64_t j = 0;
  for (; j + 64 <= count; j += 64) {
    const __m512i code = _mm512_permutexvar_epi8(unpack_order, _mm512_loadu_si512(codes + j));
    const __mmask64 bit7 = _mm512_movepi8_mask(code);
    const __m512i low = plane_bytes(planes.low, code, bit7), high = plane_bytes(planes.high, code, bit7);
    _mm512_storeu_si512(out + j, _mm512_unpacklo_epi8(low, high));
    _mm512_storeu_si512(out + j + 32, _mm512_unpackhi_epi8(low, high));
  }
  return j;
}

}  // namespace

__attribute__((target("arch=x86-64-v4"))) std::int64_t select_by_code_avx512(const std::uint16_t* of_code,
                                                                            const std::uint8_t* codes,
                                                                            std::uint16_t* out, std::int64_t count) {
  std::int64_t j = cpu_has_avx512vbmi2() ? select_by_byte_planes(of_code, codes, out, count) : 0;
  Words32 table[8];  // words 32t to 32t + 31
  std::memcpy(table, of_code, sizeof table);
  for (; j + 32 <= count; j += 32) {
    Bytes32 packed;
    std::memcpy(&packed, codes + j, sizeof packed);
    const Words32 code = __builtin_convertvector(packed, Words32);
    // The word of each code's quarter (codes 0-63, 64-127, 128-191, 192-255), then the quarter's.
    const Words32 first = __builtin_shuffle(table[0], table[1], code);
    const Words32 second = __builtin_shuffle(table[2], table[3], code);
    const Words32 third = __builtin_shuffle(table[4], table[5], code);
    const Words32 fourth = __builtin_shuffle(table[6], table[7], code);
    const auto bit6 = (code & 64) != 0, bit7 = (code & 128) != 0;
    const Words32 word = bit7 ? (bit6 ? fourth : third) : (bit6 ? second : first);
    std::memcpy(out + j, &word, sizeof word);
  }
  return j;
}

#else

std::int64_t select_by_code_avx512(const std::uint16_t*, const std::uint8_t*, std::uint16_t*, std::int64_t) { return 0; }

#endif

}  // namespace bitparity::cpu
