#include <gtest/gtest.h>

#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/quant_format.hpp"

namespace bitparity {
namespace {

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
      EXPECT_LE(table.sorted_values[i], table.midpoints[i]) << info.name;
      EXPECT_LE(table.midpoints[i], table.sorted_values[i + 1]) << info.name;
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

}  // namespace
}  // namespace bitparity
