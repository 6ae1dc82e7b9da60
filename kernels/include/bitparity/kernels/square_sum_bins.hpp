#pragma once
// Squares of fp32 values summed exactly by exponent, for the CPU norm pass: ExactSquareSum's carry
// chains cost tens of cycles per value, a bin add a few. An fp32 x with biased exponent e and
// significand m (24 bits; subnormals e = 0, m < 2^23, scaled as e = 1) is m * 2^(max(e,1) - 150),
// so x^2 = m^2 * 2^(2 max(e,1) - 300) with m^2 < 2^48: per exponent a 64-bit integer holds the sum of
// 2^16 of them exactly. Flushed into an ExactSquareSum it gives the bits add_square gives, value by
// value. Infinities land in bin 255 and NaNs in bin 256; the flush records them as add_square does.
#include <cstdint>

#include "bitparity/kernels/bits.hpp"
#include "bitparity/kernels/exact_sum.hpp"
#include "bitparity/kernels/hd.hpp"

namespace bitparity {

struct SquareSumBins {
  static constexpr int kMaxAddsBetweenFlushes = 1 << 16;  // 2^16 * (2^48 - 1) < 2^64
  static constexpr int kInfinityBin = 255, kNaNBin = 256;
  std::uint64_t bin[257] = {};  // by biased exponent, then NaN; every non-zero square added is > 0

  BP_HD void add(float x) {
    const std::uint32_t bits = float_bits(x);
    const std::uint32_t exponent = (bits >> 23) & 0xFFu;
    const std::uint32_t is_nan = (bits & 0x7FFFFFFFu) > 0x7F800000u ? 1u : 0u;
    const std::uint64_t significand = (bits & 0x7FFFFFu) | (exponent != 0 ? 0x800000u : 0u);
    bin[exponent + is_nan] += significand * significand;
  }

  // Adds the bins into `sum` and empties them.
  BP_HD void flush_into(ExactSquareSum& sum) {
    for (int exponent = 0; exponent < kInfinityBin; ++exponent) {
      if (bin[exponent] == 0) continue;
      const int scaled = exponent == 0 ? 1 : exponent;
      sum.add_shifted(bin[exponent], 2 * scaled - 300 - ExactSquareSum::kLowExponent);
      bin[exponent] = 0;
    }
    if (bin[kInfinityBin] != 0) sum.special |= ExactSquareSum::kInfinity;
    if (bin[kNaNBin] != 0) sum.special |= ExactSquareSum::kNaN;
    bin[kInfinityBin] = bin[kNaNBin] = 0;
  }
};

}  // namespace bitparity
