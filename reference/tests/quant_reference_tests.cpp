#include <gtest/gtest.h>

#include <cmath>

#include "bitparity/kernels/code_map.hpp"
#include "bitparity/reference/quant_reference.hpp"

namespace bitparity::reference {
namespace {

TEST(QuantReference, AbsmaxIsExactAndNonFiniteBlocksAreFlagged) {
  const FormatReference format(QuantFormat::nf4);
  const std::vector<float> values = {0.5f, -3.0f, 1.0f, 2.0f, NAN, 1.0f};
  const QuantReference ref = reference_quantize(values, format, 32, false);
  ASSERT_EQ(ref.absmax.size(), 1u);
  EXPECT_TRUE(std::isnan(ref.absmax[0]));
  EXPECT_EQ(ref.nonfinite[0], 1);
  const std::vector<float> finite = {0.5f, -3.0f, 1.0f};
  EXPECT_EQ(reference_quantize(finite, format, 32, false).absmax[0], 3.0f);
}

TEST(QuantReference, CodeValuesAreTheOnlyAdmissibleCode) {
  const FormatReference format(QuantFormat::nf4);
  std::vector<float> values;
  for (int i = 0; i < format.sorted_count(); ++i) values.push_back(static_cast<float>(format.sorted_value(i)));
  const QuantReference ref = reference_quantize(values, format, 32, false);
  for (int i = 0; i < format.sorted_count(); ++i) {
    EXPECT_EQ(ref.admissible[i].lowest, i);
    EXPECT_EQ(ref.admissible[i].highest, i);
  }
}

// With absmax 1 the division is exact (e(v) = 0): the nearest code alone is admissible, on either
// side of the exact midpoint by one fp32 ulp, and a tie admits only the lower code.
TEST(QuantReference, ExactDivisionAdmitsOnlyTheNearestCode) {
  const FormatReference format(QuantFormat::fp4);
  const int below = format.sorted_index_of_code(5);  // 0.5; the next value is 0.6666667
  const double midpoint = format.midpoint(below);
  float under = static_cast<float>(midpoint), over = under;
  if (under > midpoint) under = std::nextafter(under, 0.0f);
  if (over <= midpoint) over = std::nextafter(over, 1.0f);
  const QuantReference ref = reference_quantize(std::vector<float>{1.0f, under, over}, format, 32, false);
  EXPECT_EQ(ref.admissible[1].lowest, below);
  EXPECT_EQ(ref.admissible[1].highest, below);
  EXPECT_EQ(ref.admissible[2].lowest, below + 1);
  EXPECT_EQ(ref.admissible[2].highest, below + 1);
  EXPECT_EQ(ref.escalations, 0) << "exact quotients are decided in double";

  CodeMap ramp{"reference-test-ramp", 4, {}, "test"};
  for (int code = 0; code < 16; ++code) ramp.values.push_back(static_cast<float>(code - 7) / 8.0f);
  const FormatReference ramp_format(register_code_map(ramp));
  const QuantReference tie = reference_quantize(std::vector<float>{1.0f, 0.0625f}, ramp_format, 32, false);
  EXPECT_EQ(tie.admissible[1].lowest, 7) << "0.0625 is the exact midpoint of 0 and 0.125";
  EXPECT_EQ(tie.admissible[1].highest, 7) << "a tie goes to the lower code only";
}

// With absmax 3 the quotient rounds: a second code is admissible only where v's window e(v)
// reaches across the exact midpoint, and the nearest code of the exact v always is.
TEST(QuantReference, InexactDivisionAdmitsASecondCodeOnlyAcrossTheMidpoint) {
  const FormatReference format(QuantFormat::fp4);
  const int below = format.sorted_index_of_code(5);
  const double midpoint = format.midpoint(below);
  float x = std::nextafter(static_cast<float>(3.0 * midpoint), 0.0f);
  for (int i = 0; i < 8; ++i) x = std::nextafter(x, 0.0f);
  int two_code_ranges = 0;
  for (int step = 0; step < 17; ++step, x = std::nextafter(x, 3.0f)) {
    const QuantReference ref = reference_quantize(std::vector<float>{3.0f, x}, format, 32, false);
    const double v = static_cast<double>(x) / 3.0, window = 0x1p-24 * v;
    const int nearest = v <= midpoint ? below : below + 1;
    EXPECT_LE(ref.admissible[1].lowest, nearest);
    EXPECT_GE(ref.admissible[1].highest, nearest);
    const bool exact = static_cast<double>(x / 3.0f) * 3.0 == static_cast<double>(x);  // e(v) = 0 then
    const bool crosses = !exact && v - window <= midpoint && midpoint < v + window;
    EXPECT_EQ(ref.admissible[1].highest - ref.admissible[1].lowest, crosses ? 1 : 0) << std::hexfloat << x;
    two_code_ranges += crosses ? 1 : 0;
  }
  EXPECT_GT(two_code_ranges, 0) << "no x near 3M had a window across the midpoint";
}

TEST(QuantReference, StochasticRoundingAdmitsTheBracketingCodes) {
  const FormatReference format(QuantFormat::nf4);
  const std::vector<float> values = {1.0f, 0.3f};
  const QuantReference ref = reference_quantize(values, format, 32, true);
  EXPECT_LE(format.sorted_value(ref.admissible[1].lowest), 0.3);
  EXPECT_GE(format.sorted_value(ref.admissible[1].highest), 0.3);
  EXPECT_EQ(ref.admissible[1].highest, ref.admissible[1].lowest + 1);
}

// v = -2^-150 lies exactly e(v) below the code 0: v + e(v) equals the threshold, which double
// cannot tell from either side, so the decision escalates to MPFR and is exact.
TEST(QuantReference, ExactTiesWithTheErrorWindowEscalateToMpfr) {
  const FormatReference format(QuantFormat::nf4);
  const std::vector<float> values = {2.0f, -0x1p-149f};
  const QuantReference ref = reference_quantize(values, format, 32, true);
  EXPECT_EQ(ref.escalations, 1);
  EXPECT_EQ(format.sorted_value(ref.admissible[1].highest), 0.0);
  EXPECT_EQ(ref.admissible[1].lowest + 1, ref.admissible[1].highest);
}

TEST(QuantReference, DequantizeIsCorrectlyRounded) {
  const FormatReference format(QuantFormat::nf4);
  const std::vector<std::uint8_t> codes = {15, 0, 7};
  const std::vector<float> absmax = {3.0f};
  const auto bits = reference_dequantize(codes, absmax, format, 32, DType::f32);
  EXPECT_EQ(bits[0], 0x40400000u);  // 3.0
  EXPECT_EQ(bits[1], 0xC0400000u);  // -3.0
  EXPECT_EQ(bits[2], 0u);
}

}  // namespace
}  // namespace bitparity::reference
