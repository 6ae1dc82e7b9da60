// Spot checks of the conversions, and their fp32-lane forms against the double form; the exhaustive
// check against the reference over every input is property P12.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

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

// The fp32 form of the narrowing is the double form's result on every fp32 pattern but NaN.
TEST(Conversion, FloatNarrowingEqualsTheDoubleFormOnEveryFloat) {
  std::uint64_t mismatches = 0;
  for (std::uint64_t pattern = 0; pattern < (1ull << 32); ++pattern) {
    const float f = float_from_bits(static_cast<std::uint32_t>(pattern));
    if (f != f) continue;
    mismatches += round_float_to_narrow<5, 10>(f) != round_double_to_narrow<5, 10>(f) ? 1 : 0;
    mismatches += round_float_to_narrow<8, 7>(f) != round_double_to_narrow<8, 7>(f) ? 1 : 0;
  }
  EXPECT_EQ(mismatches, 0u);
}

// Doubles where rounding twice could differ from rounding once: every midpoint between neighbouring
// f16 and bf16 values (ties), with neighbours a double ulp and 2^-40 away on each side, and random
// doubles of full precision over both formats' ranges and below. Round-to-odd then nearest is the
// single rounding on all of them; fp32 nearest then nearest is not (the cases reach the hazard).
TEST(Conversion, RoundToOddThenNearestIsTheSingleRounding) {
  std::vector<double> cases;
  // Each midpoint between a format's neighbouring finite values, with its close neighbours.
  const auto add_midpoints = [&](std::uint32_t infinity, float (*widen)(std::uint16_t)) {
    for (std::uint32_t x = 0; x < infinity; ++x) {
      const double middle = (static_cast<double>(widen(static_cast<std::uint16_t>(x))) + widen(static_cast<std::uint16_t>(x + 1))) / 2;
      for (const double v : {middle, std::nextafter(middle, 0.0), std::nextafter(middle, 1e300), middle * (1 + 0x1p-40),
                             middle * (1 - 0x1p-40)}) {
        cases.push_back(v);
        cases.push_back(-v);
      }
    }
  };
  add_midpoints(0x7C00, f16_to_float);
  add_midpoints(0x7F80, bf16_to_float);
  std::mt19937_64 random(7);
  for (int i = 0; i < 1 << 22; ++i) {
    const std::uint64_t fraction = random() >> 12;
    const std::uint64_t exponent = 1023 - 160 + random() % 300;  // 2^-160 .. 2^139
    cases.push_back(std::bit_cast<double>((random() & (1ull << 63)) | (exponent << 52) | fraction));
  }
  for (const double v : {0.0, -0.0, 1e-300, 65520.0, 65519.99, 0x1.fep127, 1e300, HUGE_VAL, -HUGE_VAL}) cases.push_back(v);
  std::uint64_t wrong_f16 = 0, wrong_bf16 = 0, naive_wrong = 0;
  for (const double v : cases) {
    wrong_f16 += round_double_to_narrow_by_odd<5, 10>(v) != round_double_to_narrow<5, 10>(v) ? 1 : 0;
    wrong_bf16 += round_double_to_narrow_by_odd<8, 7>(v) != round_double_to_narrow<8, 7>(v) ? 1 : 0;
    naive_wrong += round_float_to_narrow<8, 7>(static_cast<float>(v)) != round_double_to_narrow<8, 7>(v) ? 1 : 0;
  }
  EXPECT_EQ(wrong_f16, 0u);
  EXPECT_EQ(wrong_bf16, 0u);
  EXPECT_GT(naive_wrong, 0u) << "no case where rounding through fp32 to nearest goes wrong: the cases miss the hazard";
}

}  // namespace
}  // namespace bitparity
