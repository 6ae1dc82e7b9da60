// Spot checks of the conversions; the exhaustive check over every input is property P12.
#include <gtest/gtest.h>

#include <cmath>

#include "bitparity/kernels/convert.hpp"

namespace bitparity {
namespace {

TEST(Conversion, HalfKnownValues) {
  EXPECT_EQ(float_to_f16(1.0f), 0x3C00);
  EXPECT_EQ(float_to_f16(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_f16(65519.996f), 0x7BFF);  // just below the overflow midpoint
  EXPECT_EQ(float_to_f16(65520.0f), 0x7C00);    // the midpoint ties to even: infinity
  EXPECT_EQ(float_to_f16(0x1p-24f), 0x0001);    // smallest subnormal
  EXPECT_EQ(float_to_f16(0x1p-25f), 0x0000);    // half of it ties to even zero
  EXPECT_EQ(float_to_f16(0x1.8p-25f), 0x0001);  // above half rounds up
  EXPECT_EQ(float_to_f16(-0.0f), 0x8000);
  EXPECT_EQ(float_to_f16(1.0f + 0x1p-11f), 0x3C00);  // tie to even (down)
  EXPECT_EQ(float_to_f16(1.0f + 0x3p-11f), 0x3C02);  // tie to even (up)
  EXPECT_EQ(float_to_f16(-INFINITY), 0xFC00);
  EXPECT_EQ(float_to_f16(0x1.ffcp-15f), 0x0400);     // rounds up into the smallest normal
}

TEST(Conversion, BFloatKnownValues) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16(1.0f + 0x1p-8f), 0x3F80);   // tie to even
  EXPECT_EQ(float_to_bf16(1.0f + 0x3p-8f), 0x3F82);
  EXPECT_EQ(float_to_bf16(0x1.fffffep127f), 0x7F80);  // rounds past the largest finite: infinity
  EXPECT_EQ(float_to_bf16(0x1p-149f), 0x0000);        // far below half the smallest bf16 subnormal
  EXPECT_EQ(float_to_bf16(0x1p-133f), 0x0001);
}

TEST(Conversion, NanStaysNanWithSign) {
  const float quiet_negative = -std::nanf("");
  EXPECT_EQ(float_to_f16(quiet_negative) & 0xFE00, 0xFE00);
  // A signalling NaN whose payload lives only in the low bits must not become infinity.
  const float low_payload = float_from_bits(0x7F800001u);
  EXPECT_TRUE(std::isnan(f16_to_float(float_to_f16(low_payload))));
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(low_payload))));
}

TEST(Conversion, WideningIsExactForEveryHalf) {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const float f = f16_to_float(static_cast<std::uint16_t>(h));
    if (std::isnan(f)) continue;
    EXPECT_EQ(float_to_f16(f), h) << "f16 " << std::hex << h;
    const float b = bf16_to_float(static_cast<std::uint16_t>(h));
    if (!std::isnan(b)) {
      EXPECT_EQ(float_to_bf16(b), h) << "bf16 " << std::hex << h;
    }
  }
}

}  // namespace
}  // namespace bitparity
