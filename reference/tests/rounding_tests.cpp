#include <gtest/gtest.h>

#include <cmath>

#include "bitparity/reference/rounding.hpp"

namespace bitparity::reference {
namespace {

TEST(ReferenceRounding, RoundToOddKeepsTheStickyBit) {
  EXPECT_EQ(round_to_odd_f32(1.0), 1.0f);
  const double just_above_one = 1.0 + 0x1p-30;
  EXPECT_EQ(round_to_odd_f32(just_above_one), 1.0f + 0x1p-23f);  // truncated to 1, made odd
  EXPECT_EQ(round_to_odd_f32(-just_above_one), -(1.0f + 0x1p-23f));
  EXPECT_EQ(round_to_odd_f32(1e300), 0x1.fffffep127f);
}

// The double-rounding trap of design.md: a value just above a bf16 tie that an RNE float would
// round onto the tie, and then to even (wrongly downwards).
TEST(ReferenceRounding, SixteenBitResultsAreNotDoubleRounded) {
  const double exact = 1.0 + 0x1p-8 + 0x1p-40;  // above the tie between 1 and 1+2^-7
  EXPECT_EQ(correctly_rounded_bits(exact, DType::bf16), 0x3F81u);
  const double half_exact = 1.0 + 0x1p-11 + 0x1p-40;
  EXPECT_EQ(correctly_rounded_bits(half_exact, DType::f16), 0x3C01u);
}

TEST(ReferenceRounding, NarrowRoundingEdges) {
  EXPECT_EQ(round_nearest_even_narrow(65520.0f, 5, 10), 0x7C00);
  EXPECT_EQ(round_nearest_even_narrow(65519.0f, 5, 10), 0x7BFF);
  EXPECT_EQ(round_nearest_even_narrow(0x1p-25f, 5, 10), 0x0000);
  EXPECT_EQ(round_nearest_even_narrow(0x1.000002p-25f, 5, 10), 0x0001);
  EXPECT_EQ(round_nearest_even_narrow(-0.0f, 8, 7), 0x8000);
  EXPECT_EQ(decode_narrow(0x0001, 5, 10), 0x1p-24);
  EXPECT_EQ(decode_narrow(0x7BFF, 5, 10), 65504.0);
}

}  // namespace
}  // namespace bitparity::reference
