#pragma once
// An exact, order-free sum of squares of fp32 values: a fixed-point number with unit 2^-352 in
// eleven 64-bit limbs (up to 2^352). x^2 of an fp32 x is exact in double and lies in
// [2^-298, 2^256), so every addition is exact, any grouping gives the same bits, and the result is
// rounded once (to nearest even) when it is read as a double. Norms built on it cannot depend on
// launch configuration, device or world size. A non-finite term is not dropped: it is recorded in
// `special` and the sum reads as inf (NaN if a NaN was added), the sum of squares of the values as
// held, as floating-point arithmetic would give it.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "bitparity/kernels/bits.hpp"
#include "bitparity/kernels/hd.hpp"

namespace bitparity {

struct ExactSquareSum {
  static constexpr int kLimbs = 11;
  static constexpr int kLowExponent = -352;
  static constexpr std::uint64_t kInfinity = 1, kNaN = 2;
  std::uint64_t limb[kLimbs] = {};
  std::uint64_t special = 0;  // the kinds of non-finite terms added (bits above)

  BP_HD void add_at(int index, std::uint64_t value) {
    for (int i = index; i < kLimbs && value != 0; ++i) {
      const std::uint64_t sum = limb[i] + value;
      value = sum < value ? 1u : 0u;  // the carry into the next limb
      limb[i] = sum;
    }
  }

  // Records x's kind where it is infinite or NaN; false there.
  BP_HD bool finite_or_recorded(float x) {
    const std::uint32_t magnitude = float_bits(x) & 0x7FFFFFFFu;
    if (magnitude < 0x7F800000u) return true;
    special |= magnitude == 0x7F800000u ? kInfinity : kNaN;
    return false;
  }

  BP_HD void add_square(float x) {
    if (finite_or_recorded(x)) add_exact(static_cast<double>(x) * static_cast<double>(x));  // the square is exact
  }

  // An fp32 value >= 0 taken as exact, or its kind where it is infinite or NaN: a sum of squares
  // already rounded to fp32, as fault injection adds one (it overflows as floating point does).
  BP_HD void add_fp32(float x) {
    if (finite_or_recorded(x)) add_exact(static_cast<double>(x));
  }

  // A finite double >= 0 whose lowest significand bit is at or above the unit 2^-352 (any square of
  // an fp32, any fp32 >= 0), added exactly.
  BP_HD void add_exact(double value) {
    if (value == 0.0) return;
    const std::uint64_t bits = double_bits(value);
    const int exponent = static_cast<int>(bits >> 52);  // never 0 for the values above
    const std::uint64_t significand = (bits & ((1ull << 52) - 1)) | (1ull << 52);
    const int position = exponent - 1075 - kLowExponent;  // of the significand's lowest bit, >= 0
    const int index = position / 64, shift = position % 64;
    add_at(index, significand << shift);
    if (shift > 11) add_at(index + 1, significand >> (64 - shift));
  }

  // value * 2^(position + kLowExponent) for any 64-bit value whose top bit stays below 2^352 there.
  BP_HD void add_shifted(std::uint64_t value, int position) {
    const int index = position / 64, shift = position % 64;
    add_at(index, value << shift);
    if (shift != 0) add_at(index + 1, value >> (64 - shift));
  }

  BP_HD void merge(const ExactSquareSum& other) {
    special |= other.special;
    std::uint64_t carry = 0;
    for (int i = 0; i < kLimbs; ++i) {
      const std::uint64_t partial = limb[i] + other.limb[i];
      const std::uint64_t c1 = partial < limb[i] ? 1u : 0u;
      const std::uint64_t total = partial + carry;
      const std::uint64_t c2 = total < partial ? 1u : 0u;
      limb[i] = total;
      carry = c1 + c2;
    }
  }

  // The sum rounded once to the nearest double (ties to even).
  BP_HD double to_double() const {
    if ((special & kNaN) != 0) return NAN;
    if (special != 0) return INFINITY;
    int top = kLimbs - 1;
    while (top >= 0 && limb[top] == 0) --top;
    if (top < 0) return 0.0;
    const int leading = count_leading_zeros(limb[top]);
    const std::uint64_t next = top > 0 ? limb[top - 1] : 0;
    const std::uint64_t window = leading == 0 ? limb[top] : (limb[top] << leading) | (next >> (64 - leading));
    bool sticky = leading == 0 ? next != 0 : (next << leading) != 0;
    for (int i = top - 2; i >= 0 && !sticky; --i) sticky = limb[i] != 0;
    std::uint64_t kept = window >> 11;
    const std::uint64_t remainder = window & 0x7FF;
    if (remainder > 0x400 || (remainder == 0x400 && (sticky || (kept & 1)))) ++kept;
    const int exponent = top * 64 + (63 - leading) - 52 + kLowExponent;  // of kept's lowest bit
    return ldexp(static_cast<double>(kept), exponent);
  }

};

}  // namespace bitparity
