#pragma once
// The nearest-code decision of 16-bit inputs (f16, bf16) made on the inputs themselves. With the
// block's absmax fixed, v = fl32(x / absmax) never decreases as x grows, so `t < v` holds for the x
// above one boundary: each threshold t becomes a threshold on x, found once per block, and counting
// them below x gives the count the search over v gives (ARITHMETIC.md, "Decisions on 16-bit
// inputs"). No division per element, and 16-bit compares, twice the lanes of fp32 ones.
#include <cstdint>
#include "bitparity/kernels/convert.hpp"
#include "bitparity/kernels/dtype.hpp"
#include "bitparity/kernels/quant_format.hpp"

namespace bitparity {

// A 16-bit float pattern as an unsigned key that orders as its value: positive patterns above
// negative ones, -0 just below +0, NaN patterns beyond the infinities.
BP_HD std::uint16_t narrow_order_key(std::uint16_t bits) {
  return static_cast<std::uint16_t>((bits & 0x8000u) != 0 ? ~bits : bits | 0x8000u);
}

BP_HD std::uint16_t narrow_bits_of_key(std::uint16_t key) {
  return static_cast<std::uint16_t>((key & 0x8000u) != 0 ? key & 0x7FFFu : ~key);
}

template <DType D>
BP_HD double narrow_as_double(std::uint16_t bits) {
  return static_cast<double>(D == DType::f16 ? f16_to_float(bits) : bf16_to_float(bits));
}

// The key of the largest D value at most `bound` (a double, not NaN): its nearest D value, one key
// lower where that lies above the bound. Past the largest finite value the nearest is infinity.
template <DType D>
BP_HD std::uint16_t key_at_most(double bound) {
  const std::uint16_t nearest = D == DType::f16 ? round_double_to_narrow<5, 10>(bound) : round_double_to_narrow<8, 7>(bound);
  const std::uint16_t key = narrow_order_key(nearest);
  return narrow_as_double<D>(nearest) > bound ? static_cast<std::uint16_t>(key - 1u) : key;
}

// Level entry i of the table (thresholds_by_level[i], with threshold t) as a key on x: the largest
// key whose value x has fl32(x / absmax) <= t, for a block with absmax > 0. That is the largest x
// below edge * absmax, or equal to it where the edge is closed; the product is exact in double (a
// 25-bit edge times a 24-bit absmax), so x is found without rounding anything but the final step to
// D. The +inf padding stays +inf, above every finite x.
template <DType D>
BP_HD std::uint16_t input_threshold_key(const CodeTable& table, int i, float absmax) {
  const double bound = table.level_edges[i] * static_cast<double>(absmax);
  const std::uint16_t key = key_at_most<D>(bound);
  const bool excluded = table.level_edge_closed[i] == 0 && narrow_as_double<D>(narrow_bits_of_key(key)) == bound;
  return excluded ? static_cast<std::uint16_t>(key - 1u) : key;
}

// Level keys of a block in the search's order, entry i at position i + 1 (level l starts at 2^l);
// entries past the table's levels stay +inf-like (0xFFFF, above every key).
inline constexpr int kLevelKeys = 256;
template <DType D>
BP_HD void input_threshold_keys(const CodeTable& table, float absmax, std::uint16_t* keys) {
  keys[0] = 0xFFFFu;
  const int entries = 2 * table.first_step - 1;
  for (int i = 0; i < kLevelKeys - 1; ++i) keys[i + 1] = i < entries ? input_threshold_key<D>(table, i, absmax) : 0xFFFFu;
}

// The count of thresholds below v = fl32(x / absmax) for the 16-bit input of key `key`: count_below's
// search, each candidate compared on keys.
BP_HD int sorted_index_by_keys(const std::uint16_t* keys, int first_step, std::uint16_t key) {
  int count = 0;
  for (int level = 0, step = first_step; step > 0; ++level, step >>= 1) {
    count += keys[(1 << level) + count / (2 * step)] < key ? step : 0;
  }
  return count;
}

// fp32 inputs (input_keys_f32_cpu.cpp) take the same boundaries, as 32-bit keys: the pattern as a key
// that orders as its value (positive above negative, -0 just below +0, NaN beyond the infinities).
BP_HD std::uint32_t f32_order_key(std::uint32_t bits) { return (bits & 0x80000000u) != 0 ? ~bits : bits | 0x80000000u; }

BP_HD std::uint32_t f32_bits_of_key(std::uint32_t key) { return (key & 0x80000000u) != 0 ? key & 0x7FFFFFFFu : ~key; }

// Level entry i as a key on fp32 inputs: the largest x below edge * absmax, or equal to it where the
// edge is closed. The bound is exact in double; its nearest fp32 value, one key lower where that lies
// above it (past FLT_MAX the nearest is infinity), then one lower again where it equals an open edge.
BP_HD std::uint32_t input_threshold_key_f32(const CodeTable& table, int i, float absmax) {
  const double bound = table.level_edges[i] * static_cast<double>(absmax);
  const float nearest = static_cast<float>(bound);
  std::uint32_t key = f32_order_key(float_bits(nearest));
  if (static_cast<double>(nearest) > bound) --key;
  const bool excluded = table.level_edge_closed[i] == 0 && static_cast<double>(float_from_bits(f32_bits_of_key(key))) == bound;
  return excluded ? key - 1u : key;
}

// The level keys of a block for fp32 inputs, in input_threshold_keys' layout.
BP_HD void input_threshold_keys_f32(const CodeTable& table, float absmax, std::uint32_t* keys) {
  keys[0] = 0xFFFFFFFFu;
  const int entries = 2 * table.first_step - 1;
  for (int i = 0; i < kLevelKeys - 1; ++i) keys[i + 1] = i < entries ? input_threshold_key_f32(table, i, absmax) : 0xFFFFFFFFu;
}

// sorted_index_by_keys on 32-bit keys.
BP_HD int sorted_index_by_keys_f32(const std::uint32_t* keys, int first_step, std::uint32_t key) {
  int count = 0;
  for (int level = 0, step = first_step; step > 0; ++level, step >>= 1) {
    count += keys[(1 << level) + count / (2 * step)] < key ? step : 0;
  }
  return count;
}

}  // namespace bitparity
