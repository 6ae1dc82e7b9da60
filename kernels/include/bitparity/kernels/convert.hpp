#pragma once
// Conversions between fp32 and the 16-bit formats, identical on host and device.
// Rounding is to nearest, ties to even, with subnormals; NaN stays NaN (sign and leading payload
// bits kept, quiet bit set); overflow goes to infinity. The order of operations is in ARITHMETIC.md.
#include <cmath>
#include <cstdint>

#include "bitparity/kernels/bits.hpp"
#include "bitparity/kernels/hd.hpp"

namespace bitparity {

// Exact widening conversions. The cases are selects, so that a loop of them vectorizes.
BP_HD float f16_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1Fu;
  const std::uint32_t mantissa = h & 0x3FFu;
  const std::uint32_t infinite_or_nan = sign | 0x7F800000u | (mantissa << 13);
  const std::uint32_t normal = sign | ((exponent - 15 + 127) << 23) | (mantissa << 13);
  // A subnormal (or zero) is mantissa * 2^-24: an exact product, a normal fp32.
  const std::uint32_t subnormal = sign | float_bits(static_cast<float>(mantissa) * 0x1p-24f);
  return float_from_bits(exponent == 0x1Fu ? infinite_or_nan : (exponent == 0 ? subnormal : normal));
}

BP_HD float bf16_to_float(std::uint16_t b) { return float_from_bits(static_cast<std::uint32_t>(b) << 16); }

// The magnitude bits of a finite or infinite value rounded once to a binary format with ExpBits
// exponent and MantBits fraction bits (no intermediate rounding), from a source format held in
// `Bits` with SourceFraction fraction bits and exponent bias SourceBias (double or fp32). Written
// without a branch on the value, so that a compiler can vectorize a loop of it; the cases are
// selects. A source subnormal gets a wrong implicit bit here, but lies so far below half the
// smallest subnormal of f16 or bf16 (from double), or of f16 (from fp32), that its shift drops every
// bit and it rounds to zero.
template <class Bits, int SourceFraction, int SourceBias, int ExpBits, int MantBits>
BP_HD std::uint32_t narrow_magnitude(Bits magnitude) {
  constexpr int kWidth = 8 * static_cast<int>(sizeof(Bits));
  const Bits infinity = static_cast<Bits>(((1u << ExpBits) - 1u) << MantBits);
  const Bits significand = (magnitude & ((Bits{1} << SourceFraction) - 1)) | (Bits{1} << SourceFraction);
  const int e = static_cast<int>(magnitude >> SourceFraction) - SourceBias;  // value = significand * 2^(e - SourceFraction)
  const int bias = (1 << (ExpBits - 1)) - 1;
  const int emin = 1 - bias;
  const bool subnormal = e < emin;  // fewer fraction bits survive
  int shift = SourceFraction - MantBits + (subnormal ? emin - e : 0);
  // Past SourceFraction + 1 every bit is dropped and the remainder is below half: the result is
  // zero. Capping below the width keeps the shifts defined and gives that same zero.
  shift = shift < kWidth - 1 ? shift : kWidth - 1;
  // The kept bits with the round bit below them; sticky is whether any lower bit is set. (Not a
  // mask `(1 << shift) - 1`: GCC 12 does not vectorize a constant shifted by a variable amount.)
  const Bits with_round_bit = significand >> (shift - 1);
  Bits kept = with_round_bit >> 1;
  const Bits round_bit = with_round_bit & 1u;
  const Bits sticky = (with_round_bit << (shift - 1)) != significand ? 1u : 0u;
  // Ties to even, without a branch on the data (a branch here mispredicts on every other value).
  kept += round_bit & (sticky | kept);
  // A subnormal's kept bits are the result (a carry into 2^MantBits is the smallest normal). A
  // normal's kept carries the implicit bit at 2^MantBits, which adds one to the biased exponent; a
  // rounding carry propagates into the exponent, and past the largest finite value (or from an
  // infinite input) lands on inf.
  const Bits biased = static_cast<Bits>(subnormal ? 0 : e + bias - 1);
  Bits result = subnormal ? kept : (biased << MantBits) + kept;
  result = result < infinity ? result : infinity;
  return static_cast<std::uint32_t>(result);
}

// A finite or infinite double rounded once to f16 (5, 10) or bf16 (8, 7). NaN is the callers'.
template <int ExpBits, int MantBits>
BP_HD std::uint16_t round_double_to_narrow(double value) {
  const std::uint64_t bits = double_bits(value);
  const std::uint32_t sign = static_cast<std::uint32_t>(bits >> 63) << (ExpBits + MantBits);
  return static_cast<std::uint16_t>(
      sign | narrow_magnitude<std::uint64_t, 52, 1023, ExpBits, MantBits>(bits & 0x7FFFFFFFFFFFFFFFull));
}

// The same from fp32, in 32-bit integers (twice the lanes of a vector). bf16 is fp32's upper half:
// adding 0x7FFF and the kept last bit carries into it exactly when the dropped half is above a tie,
// or a tie with an odd kept part. NaN is the callers': none keeps what this gives for one (each tests
// for it first, or selects the canonical NaN over it). On a device the
// conversion instruction (bf16's from sm_80) gives the same rounding (round to nearest even, with subnormals, overflow
// to infinity) in one instruction, where the integer form of f16 takes about twenty; P12 and P5 on
// the GPU compare the two.
template <int ExpBits, int MantBits>
BP_HD std::uint16_t round_float_to_narrow(float value) {
#if defined(__CUDA_ARCH__)
  static_assert((ExpBits == 5 && MantBits == 10) || (ExpBits == 8 && MantBits == 7), "f16 or bf16");
  if constexpr (ExpBits == 5) {
    std::uint16_t narrowed;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(narrowed) : "f"(value));
    return narrowed;
  }
#if __CUDA_ARCH__ >= 800  // cvt to bf16 from sm_80; older devices take the integer form below
  if constexpr (ExpBits == 8) {
    std::uint16_t narrowed;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(narrowed) : "f"(value));
    return narrowed;
  }
#endif
#endif
  const std::uint32_t bits = float_bits(value);
  const std::uint32_t sign = (bits >> 31) << (ExpBits + MantBits);
  const std::uint32_t magnitude = bits & 0x7FFFFFFFu;
  if constexpr (ExpBits == 8) {
    static_assert(MantBits == 7, "an 8-bit exponent is bf16");
    return static_cast<std::uint16_t>(sign | ((magnitude + 0x7FFFu + ((magnitude >> 16) & 1u)) >> 16));
  } else {
    return static_cast<std::uint16_t>(sign | narrow_magnitude<std::uint32_t, 23, 127, ExpBits, MantBits>(magnitude));
  }
}

// A double rounded to fp32 by round-to-odd: toward zero, with the last bit set where inexact. Rounded
// again to nearest in a format with at least two fewer significand bits whose values fp32 holds (f16,
// bf16), it gives that format's single rounding of the double (Boldo and Melquiond, "When double
// rounding is odd", 2005), in fp32 lanes. Infinite inputs stay infinite; NaN is the callers'.
BP_HD float round_double_to_odd_float(double value) {
  const float nearest = static_cast<float>(value);
  const double back = static_cast<double>(nearest);
  std::uint32_t bits = float_bits(nearest);
  bits -= fabs(back) > fabs(value) ? 1u : 0u;  // rounded away from zero: step back (never from 0)
  bits |= back != value ? 1u : 0u;
  return float_from_bits(bits);
}

// The exact product a*b rounded to fp32 by round-to-odd, in fp32 arithmetic: p = fl(a*b) and its
// error e = fma(a, b, -p), which is exact where the exponents of a and b sum to at least -103 (Boldo
// and Muller); callers make sure of it, or that a product so small rounds to zero in their format.
// Where e != 0, p steps back toward zero if it was rounded away, and its last bit is set. A
// non-finite p (an infinite or NaN factor) is kept.
BP_HD float product_rounded_to_odd(float a, float b) {
  const float p = a * b;
  const float e = fmaf(a, b, -p);
  std::uint32_t bits = float_bits(p);
  const bool inexact = (bits & 0x7F800000u) != 0x7F800000u && e != 0.0f;
  const bool rounded_away = (e < 0.0f) == (p > 0.0f);  // |p| > |a*b|
  bits -= inexact && rounded_away ? 1u : 0u;
  bits |= inexact ? 1u : 0u;
  return float_from_bits(bits);
}

// The single rounding of a double to f16 or bf16 (round_double_to_narrow), through fp32 lanes.
template <int ExpBits, int MantBits>
BP_HD std::uint16_t round_double_to_narrow_by_odd(double value) {
  return round_float_to_narrow<ExpBits, MantBits>(round_double_to_odd_float(value));
}

template <int ExpBits, int MantBits>
BP_HD std::uint16_t nan_to_narrow(std::uint32_t f32_bits) {
  const std::uint32_t sign = (f32_bits >> 31) << (ExpBits + MantBits);
  const std::uint32_t infinity = ((1u << ExpBits) - 1u) << MantBits;
  const std::uint32_t payload = (f32_bits & 0x7FFFFFu) >> (23 - MantBits);
  return static_cast<std::uint16_t>(sign | infinity | payload | (1u << (MantBits - 1)));
}

BP_HD std::uint16_t float_to_f16(float value) {
  const std::uint32_t bits = float_bits(value);
  if (is_nan_bits(bits)) return nan_to_narrow<5, 10>(bits);
  return round_float_to_narrow<5, 10>(value);
}

BP_HD std::uint16_t float_to_bf16(float value) {
  const std::uint32_t bits = float_bits(value);
  if (is_nan_bits(bits)) return nan_to_narrow<8, 7>(bits);
  return round_float_to_narrow<8, 7>(value);
}

inline constexpr std::uint16_t kCanonicalNanF16 = 0x7E00u;
inline constexpr std::uint16_t kCanonicalNanBF16 = 0x7FC0u;

}  // namespace bitparity
