#include <gtest/gtest.h>

#include <cmath>

#include "bitparity/kernels/code_map.hpp"
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

// The finer index gives the search's code for every fp32 pattern: over each of its buckets the
// count moves at most once, at the bucket's threshold, so both ends of every bucket (the clamped
// ranges below the floor and above the ceiling included), both sides of every threshold, the
// specials and a stride over all patterns cover it.
TEST(QuantTables, FinerIndexGivesTheSearchedNearestCode) {
  for (const auto& info : quant_formats()) {
    const CodeTable& table = code_table(info.format);
    if (info.builtin) {
      ASSERT_EQ(table.nearest_ready, 1) << info.name << ": every built-in map fits the finer index";
    }
    if (table.nearest_ready == 0) continue;
    auto agree = [&](std::uint32_t bits) {
      const float v = float_from_bits(bits);
      return nearest_code_by_bucket(table, v) == table.sorted_codes[nearest_sorted_index(table, v)];
    };
    const std::uint32_t width = 1u << table.nearest_shift;
    for (std::uint32_t sign : {0u, 0x80000000u}) {
      for (std::int32_t bucket = 0; bucket < table.nearest_per_sign; ++bucket) {
        const std::uint32_t first = table.nearest_floor + static_cast<std::uint32_t>(bucket) * width;
        ASSERT_TRUE(agree(sign | first) && agree(sign | (first + width - 1)) && agree(sign | (first - 1)))
            << info.name << " bucket " << bucket << (sign != 0 ? " negative" : "");
      }
      for (std::uint32_t magnitude : {0u, 1u, table.nearest_floor / 2, table.nearest_ceiling + width,
                                      0x3F800000u, 0x3F800001u, 0x7F7FFFFFu, 0x7F800000u, 0x7FC00000u, 0x7FFFFFFFu}) {
        ASSERT_TRUE(agree(sign | magnitude)) << info.name << std::hex << " magnitude 0x" << magnitude;
      }
    }
    for (int i = 0; i + 1 < table.sorted_count; ++i) {
      const std::uint32_t m = float_bits(table.thresholds[i]);
      for (std::uint32_t d = 0; d <= 2; ++d) {
        ASSERT_TRUE(agree(m + d) && agree(m - d)) << info.name << " threshold " << i << " +-" << d;
      }
    }
    for (std::uint64_t bits = 0; bits < (1ull << 32); bits += 65521) {
      ASSERT_TRUE(agree(static_cast<std::uint32_t>(bits))) << info.name << " pattern " << bits;
    }
  }
}

// A map whose neighbours are closer than the finer index can separate keeps the windowed search.
TEST(QuantTables, MapTooDenseForTheFinerIndexKeepsTheSearch) {
  std::vector<float> values(256);
  for (int i = 0; i < 256; ++i) values[static_cast<std::size_t>(i)] = static_cast<float>(i - 128) / 128.0f;
  values[254] = 1.0f - 0x1p-19f;  // three values within 2^-18 of 1: two thresholds in one bucket
  values[255] = 1.0f - 0x1p-20f;
  values[253] = 1.0f;
  const CodeTable& table = code_table(register_code_map({"test-too-dense-for-index", 8, values, "a test map"}));
  EXPECT_EQ(table.nearest_ready, 0);
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
