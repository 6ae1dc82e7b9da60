#include "nearest_vector_cpu.hpp"

#include <cstring>

namespace bitparity::cpu {

// GCC's vector extensions: __builtin_shuffle with a variable index compiles to vpermps / vpermd.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)

namespace {
using Floats = float __attribute__((vector_size(64)));
using Ints = std::int32_t __attribute__((vector_size(64)));

__attribute__((target("arch=x86-64-v4"))) inline Floats load16(const float* from) {
  Floats loaded;
  std::memcpy(&loaded, from, sizeof loaded);
  return loaded;
}

constexpr int log2_of(int n) { return n <= 1 ? 0 : 1 + log2_of(n / 2); }

// count += step where the candidate lies below v (a NaN v compares false and stays at 0).
__attribute__((target("arch=x86-64-v4"))) inline Ints counted(Ints count, Floats candidate, Floats v, int step) {
  return count + ((candidate < v) & step);
}

// The level of step Step (candidates from Start) of a search over one vector, then the next ones.
template <int Step, int Start>
__attribute__((target("arch=x86-64-v4"))) inline Ints levels_of_16(Floats levels, Ints c, Floats x) {
  c = counted(c, __builtin_shuffle(levels, Start + (c >> log2_of(2 * Step))), x, Step);
  if constexpr (Step > 1) {
    return levels_of_16<Step / 2, 2 * Start + 1>(levels, c, x);
  } else {
    return c;
  }
}

// first_step <= 8 (at most 16 sorted values): every level in one vector, level l at 2^l - 1.
template <int FirstStep>
__attribute__((target("arch=x86-64-v4"))) std::int64_t search_of_16(const CodeTable& table, const float* v,
                                                                   std::int32_t* chosen, std::int64_t count) {
  const Floats levels = load16(table.thresholds_by_level);
  Ints codes;
  std::memcpy(&codes, table.sorted_codes, sizeof codes);
  std::int64_t j = 0;
  for (; j + 16 <= count; j += 16) {
    const Ints c = levels_of_16<FirstStep, 0>(levels, Ints{}, load16(v + j));
    const Ints code = __builtin_shuffle(codes, c);
    std::memcpy(chosen + j, &code, sizeof code);
  }
  return j;
}

}  // namespace

std::int64_t nearest_codes_avx512(const CodeTable& table, const float* v, std::int32_t* chosen, std::int64_t count) {
  switch (table.first_step) {
    case 8: return search_of_16<8>(table, v, chosen, count);
    case 4: return search_of_16<4>(table, v, chosen, count);
    case 2: return search_of_16<2>(table, v, chosen, count);
    case 1: return search_of_16<1>(table, v, chosen, count);
    default: return 0;
  }
}

#else

std::int64_t nearest_codes_avx512(const CodeTable&, const float*, std::int32_t*, std::int64_t) { return 0; }

#endif

}  // namespace bitparity::cpu
