#include <gtest/gtest.h>

#include <cmath>

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

TEST(QuantReference, ExactMidpointAdmitsBothNeighbours) {
  const FormatReference format(QuantFormat::fp4);
  // fp4 magnitudes 0.5 and 0.6666667: with absmax 1 place x on the exact midpoint, if it is a float.
  const int below = format.sorted_index_of_code(5);  // 0.5
  const double midpoint = format.midpoint(below);
  const float x = static_cast<float>(midpoint);
  const std::vector<float> values = {1.0f, x};
  const QuantReference ref = reference_quantize(values, format, 32, false);
  EXPECT_EQ(ref.admissible[1].lowest, below);
  EXPECT_EQ(ref.admissible[1].highest, below + 1);
  // Far from every midpoint only the nearest code is admissible.
  const std::vector<float> far = {1.0f, 0.51f};
  const QuantReference far_ref = reference_quantize(far, format, 32, false);
  EXPECT_EQ(far_ref.admissible[1].lowest, far_ref.admissible[1].highest);
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
