#include "nearest_vector_cpu.hpp"

#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

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

namespace {
// 64-bit pairs 0 2 1 3 back into 0 1 2 3.
__attribute__((target("arch=x86-64-v3"))) inline __m256 words_in_order(__m256 pairs) {
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(pairs), 0xD8));
}
}  // namespace

namespace {
// Word `index` (0-15) of the 16 words held as two 8-word halves: vpermps reads an index's low 3
// bits; bit 3, shifted to the sign, picks the half. Halves known unused are not read.
template <int LargestIndex>
__attribute__((target("arch=x86-64-v3"))) inline __m256 word_of_16(__m256 lower, __m256 upper, __m256i index) {
  const __m256 from_lower = _mm256_permutevar8x32_ps(lower, index);
  if constexpr (LargestIndex < 8) {
    return from_lower;
  } else {
    return _mm256_blendv_ps(from_lower, _mm256_permutevar8x32_ps(upper, index),
                            _mm256_castsi256_ps(_mm256_slli_epi32(index, 28)));
  }
}

// levels_of_16 on 8 values: the level of step Step (candidates from Start), then the next ones.
template <int Step, int Start, int FirstStep>
__attribute__((target("arch=x86-64-v3"))) inline __m256i levels_of_8(__m256 lower, __m256 upper, __m256i c, __m256 x) {
  const __m256i index = _mm256_add_epi32(_mm256_srli_epi32(c, log2_of(2 * Step)), _mm256_set1_epi32(Start));
  const __m256 candidate = word_of_16<Start + FirstStep / Step - 1>(lower, upper, index);
  const __m256i below = _mm256_castps_si256(_mm256_cmp_ps(candidate, x, _CMP_LT_OQ));  // a NaN x stays at 0
  c = _mm256_add_epi32(c, _mm256_and_si256(below, _mm256_set1_epi32(Step)));
  if constexpr (Step > 1) {
    return levels_of_8<Step / 2, 2 * Start + 1, FirstStep>(lower, upper, c, x);
  } else {
    return c;
  }
}

template <int FirstStep>
__attribute__((target("arch=x86-64-v3"))) std::int64_t search_of_16_avx2(const CodeTable& table, const float* v,
                                                                        std::int32_t* chosen, std::int64_t count) {
  const __m256 lower = _mm256_loadu_ps(table.thresholds_by_level), upper = _mm256_loadu_ps(table.thresholds_by_level + 8);
  const __m256 codes_lower = _mm256_castsi256_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(table.sorted_codes)));
  const __m256 codes_upper =
      _mm256_castsi256_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(table.sorted_codes + 8)));
  std::int64_t j = 0;
  for (; j + 8 <= count; j += 8) {
    const __m256i c = levels_of_8<FirstStep, 0, FirstStep>(lower, upper, _mm256_setzero_si256(), _mm256_loadu_ps(v + j));
    const __m256 code = word_of_16<2 * FirstStep - 1>(codes_lower, codes_upper, c);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(chosen + j), _mm256_castps_si256(code));
  }
  return j;
}
}  // namespace

std::int64_t nearest_codes_search_avx2(const CodeTable& table, const float* v, std::int32_t* chosen, std::int64_t count) {
  switch (table.first_step) {
    case 8: return search_of_16_avx2<8>(table, v, chosen, count);
    case 4: return search_of_16_avx2<4>(table, v, chosen, count);
    case 2: return search_of_16_avx2<2>(table, v, chosen, count);
    case 1: return search_of_16_avx2<1>(table, v, chosen, count);
    default: return 0;
  }
}

__attribute__((target("arch=x86-64-v3"))) std::int64_t nearest_codes_by_bucket_avx2(const CodeTable& table, const float* v,
                                                                                   std::int32_t* chosen, std::int64_t count) {
  if (table.nearest_ready == 0) return 0;
  const __m256i magnitude_mask = _mm256_set1_epi32(0x7FFFFFFF);
  const __m256i floor = _mm256_set1_epi32(static_cast<int>(table.nearest_floor));
  const __m256i ceiling = _mm256_set1_epi32(static_cast<int>(table.nearest_ceiling));
  const __m256i per_sign = _mm256_set1_epi32(table.nearest_per_sign);
  const __m128i shift = _mm_cvtsi32_si128(table.nearest_shift);
  const __m256i high_mask = _mm256_set1_epi32(static_cast<int>(~((1u << table.nearest_shift) - 1u)));
  const __m256i low_byte = _mm256_set1_epi32(0xFF);
  const __m256i nan_code = _mm256_set1_epi32(table.nan_code);
  const std::uint32_t* entries = table.nearest_entry;
  std::int64_t j = 0;
  for (; j + 8 <= count; j += 8) {
    const __m256 x = _mm256_loadu_ps(v + j);
    const __m256i bits = _mm256_castps_si256(x);
    const __m256i magnitude = _mm256_and_si256(bits, magnitude_mask);
    const __m256i clamped = _mm256_min_epu32(_mm256_max_epu32(magnitude, floor), ceiling);
    const __m256i negative = _mm256_srai_epi32(bits, 31);
    const __m256i bucket = _mm256_add_epi32(_mm256_srl_epi32(_mm256_sub_epi32(clamped, floor), shift),
                                            _mm256_and_si256(negative, per_sign));
    // Eight scalar loads: on Zen 3 they beat one vpgatherdd (and two vpgatherdq) of the same words.
    const __m128i low_buckets = _mm256_castsi256_si128(bucket), high_buckets = _mm256_extracti128_si256(bucket, 1);
    const auto b01 = static_cast<std::uint64_t>(_mm_cvtsi128_si64(low_buckets));
    const auto b23 = static_cast<std::uint64_t>(_mm_extract_epi64(low_buckets, 1));
    const auto b45 = static_cast<std::uint64_t>(_mm_cvtsi128_si64(high_buckets));
    const auto b67 = static_cast<std::uint64_t>(_mm_extract_epi64(high_buckets, 1));
    const auto at = [entries](std::uint64_t pair, int half) {
      return static_cast<int>(entries[static_cast<std::uint32_t>(pair >> (32 * half))]);
    };
    const __m256i entry = _mm256_setr_epi32(at(b01, 0), at(b01, 1), at(b23, 0), at(b23, 1), at(b45, 0), at(b45, 1),
                                            at(b67, 0), at(b67, 1));
    const __m256i threshold = _mm256_or_si256(_mm256_and_si256(clamped, high_mask), _mm256_andnot_si256(high_mask, entry));
    // Magnitudes are below 2^31, so signed compares order them.
    const __m256i greater = _mm256_cmpgt_epi32(magnitude, threshold), less = _mm256_cmpgt_epi32(threshold, magnitude);
    const __m256i above = _mm256_blendv_epi8(greater, less, negative);
    __m256i code = _mm256_blendv_epi8(_mm256_and_si256(_mm256_srli_epi32(entry, 16), low_byte), _mm256_srli_epi32(entry, 24), above);
    code = _mm256_blendv_epi8(code, nan_code, _mm256_castps_si256(_mm256_cmp_ps(x, x, _CMP_UNORD_Q)));  // v != v
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(chosen + j), code);
  }
  return j;
}

#else

std::int64_t nearest_codes_avx512(const CodeTable&, const float*, std::int32_t*, std::int64_t) { return 0; }
std::int64_t nearest_codes_by_bucket_avx2(const CodeTable&, const float*, std::int32_t*, std::int64_t) { return 0; }
std::int64_t nearest_codes_search_avx2(const CodeTable&, const float*, std::int32_t*, std::int64_t) { return 0; }

#endif

}  // namespace bitparity::cpu
