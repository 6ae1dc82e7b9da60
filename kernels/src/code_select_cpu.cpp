#include "code_select_cpu.hpp"

#include <cstring>

namespace bitparity::cpu {

// GCC's vector extensions: __builtin_shuffle of two registers with a variable mask compiles to
// vpermt2w, which reads each index modulo 64.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)

namespace {
using Bytes32 = std::uint8_t __attribute__((vector_size(32)));
using Words32 = std::uint16_t __attribute__((vector_size(64)));
}  // namespace

__attribute__((target("arch=x86-64-v4"))) std::int64_t select_by_code_avx512(const std::uint16_t* of_code,
                                                                            const std::uint8_t* codes,
                                                                            std::uint16_t* out, std::int64_t count) {
  Words32 table[8];  // words 32t to 32t + 31
  std::memcpy(table, of_code, sizeof table);
  std::int64_t j = 0;
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
