#pragma once
// Squares of fp32 values summed exactly by exponent, for the CPU norm pass: ExactSquareSum's carry
// chains cost tens of cycles per value, a bin add a few. An fp32 x with biased exponent e and
// significand m (24 bits; subnormals e = 0, m < 2^23, scaled as e = 1) is m * 2^(max(e,1) - 150),
// so x^2 = m^2 * 2^(2 max(e,1) - 300) with m^2 < 2^48: per exponent a 64-bit integer holds the sum of
// 2^16 of them exactly. Flushed into an ExactSquareSum it gives the bits add_square gives, value by
// value. Non-finite values are skipped, as add_square's position past the top limb skips them.
#include <cstdint>

#include "bitparity/kernels/bits.hpp"
#include "bitparity/kernels/exact_sum.hpp"
#include "bitparity/kernels/hd.hpp"

namespace bitparity {

struct SquareSumBins {
  static constexpr int kMaxAddsBetweenFlushes = 1 << 16;  // 2^16 * (2^48 - 1) < 2^64
  std::uint64_t bin[256] = {};  // by biased exponent; 255 (inf, NaN) is never flushed

  BP_HD void add(float x) {
    const std::uint32_t bits = float_bits(x);
    const std::uint32_t exponent = (bits >> 23) & 0xFFu;
    const std::uint64_t significand = (bits & 0x7FFFFFu) | (exponent != 0 ? 0x800000u : 0u);
    bin[exponent] += significand * significand;
  }

  // Adds the bins into `sum` and empties them.
  BP_HD void flush_into(ExactSquareSum& sum) {
    for (int exponent = 0; exponent < 255; ++exponent) {
      if (bin[exponent] == 0) continue;
      const int scaled = exponent == 0 ? 1 : exponent;
      sum.add_shifted(bin[exponent], 2 * scaled - 300 - ExactSquareSum::kLowExponent);
      bin[exponent] = 0;
    }
    bin[255] = 0;
  }
};

}  // namespace bitparity
