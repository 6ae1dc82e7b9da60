#include <gtest/gtest.h>

#include <cmath>

#include "bitparity/reports/check_run.hpp"

namespace bitparity::reports {
namespace {

TEST(FormatRatio, NeverRoundsUpToOne) {
  EXPECT_EQ(format_ratio(0.99999987), "0.999999");
  EXPECT_EQ(format_ratio(1.0), "1.000000");
  EXPECT_EQ(format_ratio(0.0), "0.000000");
  EXPECT_EQ(format_ratio(2e-5), "2.0e-05");
  EXPECT_EQ(format_ratio(INFINITY), "inf");
  EXPECT_EQ(format_ratio(NAN), "nan");
}

TEST(ReplayCommand, NarrowsToTheFailingRow) {
  CheckRow row;
  row.suite = fixtures::Suite::optim32;
  row.property_id = "P1";
  row.format = "lars";
  row.dtype = "f32";
  row.device = "cpu";
  row.replay_cases = 20;
  EXPECT_EQ(replay_command(row, 7),
            "bitparity check --suite optim32 --property P1 --optimizer lars --dtype f32 --device cpu --seed 7 --cases 20");
}

}  // namespace
}  // namespace bitparity::reports
