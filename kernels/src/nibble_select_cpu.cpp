#include "nibble_select_cpu.hpp"

#include <cstring>

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
  Words32 table;  // the 16 words twice: a permute index is taken modulo 32
  for (int i = 0; i < 32; ++i) table[i] = of_code[i & 15];
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

#else

std::int64_t select_by_nibbles_avx512(const std::uint16_t*, const std::uint8_t*, std::uint16_t*, std::int64_t) { return 0; }
std::int64_t select_by_nibbles_avx512(const float*, const std::uint8_t*, float*, std::int64_t) { return 0; }

#endif

}  // namespace bitparity::cpu
