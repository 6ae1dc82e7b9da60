#include <gtest/gtest.h>

#include <cmath>

#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/quant_body.hpp"
#include "bitparity/kernels/quant_format.hpp"

namespace bitparity {
namespace {

// The bucket index gives the binary search's count for every fp32 pattern. The count is a step
// function of v that moves only at midpoints, so checking every bucket's two ends and both sides of
// every midpoint covers every pattern; a stride over all patterns and the NaNs check it besides.
TEST(QuantTables, BucketIndexGivesTheSearchedNearestCode) {
  for (const auto& info : quant_formats()) {
    const CodeTable& table = code_table(info.format);
    auto agree = [&](std::uint32_t bits) {
      const float v = float_from_bits(bits);
      return nearest_sorted_index(table, v) == nearest_sorted_index_by_search(table, v);
    };
    for (std::uint32_t bucket = 0; bucket < 4096; ++bucket) {
      ASSERT_TRUE(agree(bucket << 20)) << info.name << " bucket " << bucket << " first";
      ASSERT_TRUE(agree((bucket << 20) | 0xFFFFFu)) << info.name << " bucket " << bucket << " last";
    }
    for (int i = 0; i + 1 < table.sorted_count; ++i) {
      const std::uint32_t m = float_bits(table.thresholds[i]);
      for (std::uint32_t d = 0; d <= 2; ++d) {
        ASSERT_TRUE(agree(m + d) && agree(m - d)) << info.name << " midpoint " << i << " +-" << d;
      }
    }
    for (std::uint64_t bits = 0; bits < (1ull << 32); bits += 65521) {
      ASSERT_TRUE(agree(static_cast<std::uint32_t>(bits))) << info.name << " pattern " << bits;
    }
    EXPECT_EQ(nearest_sorted_index(table, float_from_bits(0x7FC00000u)), 0) << "a NaN counts no midpoint";
    EXPECT_EQ(nearest_sorted_index(table, float_from_bits(0x7FFFFFFFu)), 0) << "a NaN counts no midpoint";
    EXPECT_EQ(nearest_sorted_index(table, float_from_bits(0x7F800000u)), table.sorted_count - 1)
        << "+inf, in a bucket of NaNs, counts every midpoint";
    EXPECT_EQ(nearest_sorted_index(table, float_from_bits(0xFF800000u)), 0) << "-inf counts none";
  }
}

TEST(QuantTables, DynamicMapsHave256SortedValuesSpanningTheRange) {
  for (bool is_signed : {true, false}) {
    const auto values = dynamic_map_values(is_signed);
    ASSERT_EQ(values.size(), 256u);
    EXPECT_TRUE(std::is_sorted(values.begin(), values.end()));
    EXPECT_EQ(values.back(), 1.0f);
    EXPECT_EQ(std::count(values.begin(), values.end(), 0.0f), 1);
    if (is_signed) {
      EXPECT_LT(values.front(), -0.99f);
      EXPECT_GT(values.front(), -1.0f);  // the signed map has +1 but not -1
    } else {
      EXPECT_EQ(values.front(), 0.0f);
    }
  }
}

TEST(QuantTables, EveryTableIsStrictlySortedWithMidpointsBetweenNeighbours) {
  for (const auto& info : quant_formats()) {
    const CodeTable& table = code_table(info.format);
    EXPECT_EQ(table.bits, info.bits);
    ASSERT_GT(table.sorted_count, 1) << info.name;
    for (int i = 0; i + 1 < table.sorted_count; ++i) {
      EXPECT_LT(table.sorted_values[i], table.sorted_values[i + 1]) << info.name << " " << i;
      EXPECT_LE(table.sorted_values[i], table.thresholds[i]) << info.name;
      EXPECT_LE(table.thresholds[i], table.sorted_values[i + 1]) << info.name;
      EXPECT_EQ(table.code_values[table.sorted_codes[i]], table.sorted_values[i]);
    }
    EXPECT_EQ(table.code_values[table.zero_code], 0.0f) << info.name;
  }
}

TEST(QuantTables, FourBitTablesHaveSixteenCodes) {
  EXPECT_EQ(code_table(QuantFormat::nf4).sorted_count, 16);
  EXPECT_EQ(code_table(QuantFormat::fp4).sorted_count, 15);  // -0 and +0 decide as one value
  EXPECT_EQ(code_table(QuantFormat::fp4).code_values[3], 1.0f);
  EXPECT_EQ(code_table(QuantFormat::fp4).code_values[11], -1.0f);
}

TEST(QuantTables, BlockSizesAreValidated) {
  EXPECT_NO_THROW(validate_block_size(QuantFormat::nf4, 32));
  EXPECT_THROW(validate_block_size(QuantFormat::dynamic8_signed, 32), Error);
  EXPECT_THROW(validate_block_size(QuantFormat::dynamic8_signed, 100), Error);
  EXPECT_THROW(parse_quant_format("nf5"), Error);
}

// The code chosen for an fp32 v is the nearest one, decided exactly in double (the distances of
// two fp32 values are exact there), a tie going to the lower code. Checked on the fp32 values
// around every exact midpoint, where a threshold rounded the wrong way would give the far code.
TEST(QuantTables, EveryValueNearAMidpointGetsTheExactlyNearestCode) {
  for (const auto& info : quant_formats()) {
    const CodeTable& table = code_table(info.format);
    for (int i = 0; i + 1 < table.sorted_count; ++i) {
      const double below = table.sorted_values[i], above = table.sorted_values[i + 1];
      const double midpoint = (below + above) / 2.0;
      float v = std::nextafter(std::nextafter(static_cast<float>(midpoint), -INFINITY), -INFINITY);
      for (int step = 0; step < 5; ++step, v = std::nextafter(v, INFINITY)) {
        if (v < below || v > above) continue;
        const int expected = (v - below) <= (above - v) ? i : i + 1;
        ASSERT_EQ(nearest_sorted_index(table, v), expected)
            << info.name << " midpoint " << i << " (" << midpoint << ") v " << std::hexfloat << v;
      }
    }
  }
}

}  // namespace
}  // namespace bitparity
