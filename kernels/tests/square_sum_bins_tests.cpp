#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "bitparity/kernels/bits.hpp"
#include "bitparity/kernels/exact_sum.hpp"
#include "bitparity/kernels/square_sum_bins.hpp"

namespace bitparity {
namespace {

void expect_same_limbs(const ExactSquareSum& expected, const ExactSquareSum& got) {
  for (int i = 0; i < ExactSquareSum::kLimbs; ++i) EXPECT_EQ(expected.limb[i], got.limb[i]) << "limb " << i;
  EXPECT_EQ(expected.special, got.special) << "the non-finite kinds recorded";
}

ExactSquareSum binned(const std::vector<float>& values) {
  ExactSquareSum sum;
  SquareSumBins bins;
  int since_flush = 0;
  for (float x : values) {
    bins.add(x);
    if (++since_flush == SquareSumBins::kMaxAddsBetweenFlushes) bins.flush_into(sum), since_flush = 0;
  }
  bins.flush_into(sum);
  return sum;
}

ExactSquareSum one_by_one(const std::vector<float>& values) {
  ExactSquareSum sum;
  for (float x : values) sum.add_square(x);
  return sum;
}

// Any bits: every exponent, subnormals, zeros and NaNs (random bits give one in 256); then
// infinities, which random bits almost never give, planted alone and beside NaNs.
TEST(SquareSumBins, GiveAddSquaresBitsOnAnyValues) {
  std::mt19937_64 random(7);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<float> values(1 + random() % 3000);
    for (float& x : values) x = float_from_bits(static_cast<std::uint32_t>(random()));
    expect_same_limbs(one_by_one(values), binned(values));
  }
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<float> values(1 + random() % 3000);
    for (float& x : values) x = float_from_bits(static_cast<std::uint32_t>(random()) & 0xFF7FFFFFu);  // finite
    values[random() % values.size()] = (trial & 1) != 0 ? -std::numeric_limits<float>::infinity()
                                                        : std::numeric_limits<float>::infinity();
    if (trial % 4 >= 2) values[random() % values.size()] = float_from_bits(0x7F800001u);  // a signalling NaN's bits
    const ExactSquareSum expected = one_by_one(values);
    EXPECT_EQ(expected.special, ExactSquareSum::kInfinity | (trial % 4 >= 2 ? ExactSquareSum::kNaN : 0u));
    expect_same_limbs(expected, binned(values));
  }
}

// One exponent filled to the flush limit with the largest significand: the bin's 64 bits are used
// to the last carry, at the top exponent (the highest limbs) and among subnormals (the lowest).
TEST(SquareSumBins, HoldAFullBinAtTheExtremes) {
  for (const float x : {std::numeric_limits<float>::max(), -std::nextafter(2.0f, 0.0f),
                        float_from_bits(0x007FFFFFu), std::numeric_limits<float>::denorm_min()}) {
    const std::vector<float> values(SquareSumBins::kMaxAddsBetweenFlushes, x);
    expect_same_limbs(one_by_one(values), binned(values));
  }
}

TEST(SquareSumBins, FlushEmptiesTheBins) {
  SquareSumBins bins;
  bins.add(3.0f);
  bins.add(std::numeric_limits<float>::infinity());
  ExactSquareSum first, second;
  bins.flush_into(first);
  bins.flush_into(second);
  EXPECT_EQ(first.special, ExactSquareSum::kInfinity);
  EXPECT_EQ(second.special, 0u);
  EXPECT_EQ(second.to_double(), 0.0);
}

}  // namespace
}  // namespace bitparity
