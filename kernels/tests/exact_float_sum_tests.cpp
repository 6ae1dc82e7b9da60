#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "bitparity/kernels/bits.hpp"
#include "bitparity/kernels/convert.hpp"
#include "bitparity/kernels/exact_float_sum.hpp"

namespace bitparity {
namespace {

ExactFloatSum sum_of(const std::vector<float>& values) {
  ExactFloatSum sum;
  for (float v : values) sum.add(v);
  return sum;
}

double rounded_f16(const ExactFloatSum& s) { return s.rounded(11, -14, 65504.0); }
double rounded_bf16(const ExactFloatSum& s) { return s.rounded(8, -126, 3.3895313892515355e38); }

// A random finite fp32 of any sign and exponent (subnormals included).
float any_finite(std::mt19937_64& random) {
  for (;;) {
    const float x = float_from_bits(static_cast<std::uint32_t>(random()));
    if (std::isfinite(x)) return x;
  }
}

// Values whose exponents lie within 2^25 of each other: their sum is exact in double, so rounding
// the double once is the correctly rounded sum, an independent answer to compare with.
TEST(ExactFloatSum, RoundsLikeAnExactDoubleSum) {
  std::mt19937_64 random(11);
  for (int trial = 0; trial < 200000; ++trial) {
    const int count = 1 + static_cast<int>(random() % 6);
    const int base = static_cast<int>(random() % 270) - 150;
    std::vector<float> values;
    double exact = 0.0;
    for (int i = 0; i < count; ++i) {
      const double significand = static_cast<double>(static_cast<std::int64_t>(random() % (1u << 24)) - (1 << 23));
      const float v = static_cast<float>(std::ldexp(significand, base + static_cast<int>(random() % 3) - 23));
      values.push_back(v);
      exact += static_cast<double>(v);
    }
    const ExactFloatSum sum = sum_of(values);
    ASSERT_EQ(float_bits(sum.to_float()), float_bits(static_cast<float>(exact))) << "trial " << trial;
    ASSERT_EQ(float_to_f16(static_cast<float>(rounded_f16(sum))), (round_double_to_narrow<5, 10>(exact))) << trial;
    ASSERT_EQ(float_to_bf16(static_cast<float>(rounded_bf16(sum))), (round_double_to_narrow<8, 7>(exact))) << trial;
  }
}

TEST(ExactFloatSum, AnyOrderAndAnyGroupingGiveTheSameBits) {
  std::mt19937_64 random(5);
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<float> values(2 + random() % 40);
    for (auto& v : values) v = any_finite(random) * 1e-30f * (random() % 2 ? 1e30f : 1.0f);
    const float in_order = sum_of(values).to_float();
    std::shuffle(values.begin(), values.end(), random);
    // Split into pieces summed apart and merged, as ranks do.
    ExactFloatSum merged;
    std::size_t start = 0;
    while (start < values.size()) {
      const std::size_t end = std::min(values.size(), start + 1 + random() % 5);
      merged.merge(sum_of(std::vector<float>(values.begin() + static_cast<long>(start), values.begin() + static_cast<long>(end))));
      start = end;
    }
    ASSERT_EQ(float_bits(merged.to_float()), float_bits(in_order)) << "trial " << trial;
  }
}

TEST(ExactFloatSum, CancellationLeavesTheSmallTermExactly) {
  const float big = 3.0e38f, tiny = float_from_bits(1u);  // the smallest subnormal
  EXPECT_EQ(float_bits(sum_of({big, tiny, -big}).to_float()), 1u);
  EXPECT_EQ(float_bits(sum_of({big, -big}).to_float()), 0u);  // +0, not -0
  EXPECT_EQ(sum_of({1.0f, 0x1p-24f, 0x1p-60f}).to_float(), 1.0f + 0x1p-23f);  // above the tie: rounds up
  EXPECT_EQ(sum_of({1.0f, 0x1p-24f}).to_float(), 1.0f);                      // a tie: to even
  EXPECT_EQ(sum_of({-1.0f, -0x1p-24f, -0x1p-60f}).to_float(), -1.0f - 0x1p-23f);
}

TEST(ExactFloatSum, OverflowAndNonFiniteTerms) {
  EXPECT_EQ(sum_of({3.0e38f, 3.0e38f}).to_float(), INFINITY);
  EXPECT_EQ(sum_of({-3.0e38f, -3.0e38f}).to_float(), -INFINITY);
  EXPECT_EQ(sum_of({3.0e38f, 3.0e38f, -3.0e38f}).to_float(), 3.0e38f);  // exact in between
  EXPECT_EQ(sum_of({1.0f, INFINITY}).to_float(), INFINITY);
  EXPECT_TRUE(std::isnan(sum_of({INFINITY, -INFINITY}).to_float()));
  EXPECT_TRUE(std::isnan(sum_of({1.0f, NAN}).to_float()));
  EXPECT_EQ(rounded_f16(sum_of({65504.0f, 15.0f, 0x1p-20f})), 65504.0);  // below half an ulp: stays
  EXPECT_EQ(rounded_f16(sum_of({65504.0f, 16.0f})), INFINITY);  // the tie rounds to the even 2^16: inf
}

}  // namespace
}  // namespace bitparity
