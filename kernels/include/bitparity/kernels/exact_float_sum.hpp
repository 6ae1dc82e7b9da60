#pragma once
// An exact, order-free sum of fp32 (and so of f16 and bf16) values: a signed fixed-point number with
// unit 2^-149, fp32's smallest subnormal, in five 64-bit limbs of two's complement (320 bits). Every
// finite fp32 value is a whole multiple of that unit below 2^277, so up to 2^40 additions are exact
// and any grouping gives the same bits. Reduce-scatters of gradients merge these accumulators, so the
// reduced gradient cannot depend on the world size or the rank order; it is rounded once, to the
// gradient's dtype, when it is read.
#include <cmath>
#include <cstdint>

#include "bitparity/kernels/bits.hpp"
#include "bitparity/kernels/hd.hpp"

namespace bitparity {

struct ExactFloatSum {
  static constexpr int kLimbs = 5;
  static constexpr int kUnitExponent = -149;
  static constexpr std::uint64_t kPositiveInfinity = 1, kNegativeInfinity = 2, kNaN = 4;
  std::uint64_t limb[kLimbs] = {};
  std::uint64_t special = 0;  // the kinds of non-finite values added (bits above)

  BP_HD void add(float x) {
    const std::uint32_t bits = float_bits(x);
    const std::uint32_t exponent = (bits >> 23) & 0xFFu, mantissa = bits & 0x7FFFFFu;
    if (exponent == 0xFFu) {
      special |= mantissa != 0 ? kNaN : (bits >> 31) != 0 ? kNegativeInfinity : kPositiveInfinity;
      return;
    }
    if (exponent == 0 && mantissa == 0) return;
    // |x| = significand * 2^(shift - 149): subnormals have shift 0.
    const std::uint64_t significand = exponent == 0 ? mantissa : (mantissa | 0x800000u);
    const int shift = exponent == 0 ? 0 : static_cast<int>(exponent) - 1;
    std::uint64_t addend[kLimbs] = {};
    const int index = shift / 64, offset = shift % 64;
    addend[index] = significand << offset;
    if (offset > 40 && index + 1 < kLimbs) addend[index + 1] = significand >> (64 - offset);
    if ((bits >> 31) != 0) negate(addend);
    add_limbs(addend);
  }

  BP_HD void merge(const ExactFloatSum& other) {
    add_limbs(other.limb);
    special |= other.special;
  }

  // The sum rounded once to nearest (ties to even) with `precision` significand bits and smallest
  // normal exponent `min_exponent` (fp32: 24, -126; bf16: 8, -126; f16: 11, -14), subnormals
  // included, as a double that holds it exactly; beyond `max_finite` it is an infinity.
  BP_HD double rounded(int precision, int min_exponent, double max_finite) const {
    if ((special & kNaN) != 0 || special == (kPositiveInfinity | kNegativeInfinity)) return NAN;
    if (special != 0) return special == kPositiveInfinity ? INFINITY : -INFINITY;
    std::uint64_t magnitude[kLimbs];
    for (int i = 0; i < kLimbs; ++i) magnitude[i] = limb[i];
    const bool negative = (limb[kLimbs - 1] >> 63) != 0;
    if (negative) negate(magnitude);
    int top = -1;  // the position of the leading bit
    for (int i = kLimbs - 1; i >= 0 && top < 0; --i) {
      if (magnitude[i] != 0) top = i * 64 + 63 - count_leading_zeros(magnitude[i]);
    }
    if (top < 0) return 0.0;
    // The lowest kept bit: precision bits below the leading one, never below the subnormal unit.
    const int subnormal_lowest = min_exponent - (precision - 1) - kUnitExponent;
    int lowest = top - (precision - 1);
    if (lowest < subnormal_lowest) lowest = subnormal_lowest;
    if (lowest < 0) lowest = 0;  // every bit is kept: the sum is exact in the target
    std::uint64_t kept = bits_from(magnitude, lowest, top - lowest + 1);
    if (lowest > 0 && bit_at(magnitude, lowest - 1) && ((kept & 1u) != 0 || any_bit_below(magnitude, lowest - 1))) ++kept;
    const int scale = lowest + kUnitExponent;
    const double value = ldexp(static_cast<double>(kept), scale);
    const double bounded = value > max_finite ? INFINITY : value;
    return negative ? -bounded : bounded;
  }

  BP_HD float to_float() const { return static_cast<float>(rounded(24, -126, 3.4028234663852886e38)); }

 private:
  BP_HD void add_limbs(const std::uint64_t* addend) {
    std::uint64_t carry = 0;
    for (int i = 0; i < kLimbs; ++i) {
      const std::uint64_t partial = limb[i] + addend[i];
      const std::uint64_t c1 = partial < limb[i] ? 1u : 0u;
      const std::uint64_t total = partial + carry;
      const std::uint64_t c2 = total < partial ? 1u : 0u;
      limb[i] = total;
      carry = c1 + c2;
    }
  }
  BP_HD static void negate(std::uint64_t* value) {
    std::uint64_t carry = 1;
    for (int i = 0; i < kLimbs; ++i) {
      const std::uint64_t inverted = ~value[i];
      value[i] = inverted + carry;
      carry = (carry != 0 && value[i] == 0) ? 1u : 0u;
    }
  }
  BP_HD static bool bit_at(const std::uint64_t* value, int position) {
    return ((value[position / 64] >> (position % 64)) & 1u) != 0;
  }
  BP_HD static bool any_bit_below(const std::uint64_t* value, int position) {
    for (int i = 0; i < position / 64; ++i) {
      if (value[i] != 0) return true;
    }
    const int offset = position % 64;
    return offset != 0 && (value[position / 64] & ((std::uint64_t{1} << offset) - 1)) != 0;
  }
  // `count` (at most 63) bits starting at `position`, as an integer.
  BP_HD static std::uint64_t bits_from(const std::uint64_t* value, int position, int count) {
    const int index = position / 64, offset = position % 64;
    std::uint64_t window = value[index] >> offset;
    if (offset != 0 && index + 1 < kLimbs) window |= value[index + 1] << (64 - offset);
    return count >= 64 ? window : window & ((std::uint64_t{1} << count) - 1);
  }
};

}  // namespace bitparity
