// Integer lanes: summing the lanes of any number of accumulators, in any order, and decoding gives
// exactly their merge (the reduction NCCL and mpi-integer-sum perform).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "bitparity/distributed/integer_lanes.hpp"
#include "bitparity/kernels/bits.hpp"

namespace bitparity::distributed {
namespace {

float random_float(std::mt19937_64& random) {
  switch (random() % 8) {
    case 0: return float_from_bits(static_cast<std::uint32_t>(random()) & 0x807FFFFFu);  // subnormal or zero
    case 1: return (random() % 2 ? 1.f : -1.f) * 3.4028234663852886e38f;
    case 2: {
      const float specials[] = {INFINITY, -INFINITY, NAN};
      return random() % 4 == 0 ? specials[random() % 3] : 1.f;
    }
    default: {
      const std::uint32_t bits = static_cast<std::uint32_t>(random());
      return ((bits >> 23) & 0xFFu) == 0xFFu ? 1.5f : float_from_bits(bits);  // any finite value
    }
  }
}

template <class Sum, std::size_t kLanes>
Sum summed_through_lanes(const std::vector<Sum>& parts, std::mt19937_64& random) {
  std::vector<std::size_t> order(parts.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), random);
  std::vector<std::uint64_t> total(kLanes, 0), lanes(kLanes);
  for (std::size_t i : order) {
    encode_lanes(&parts[i], 1, lanes.data());
    for (std::size_t l = 0; l < kLanes; ++l) total[l] += lanes[l];
  }
  Sum out;
  decode_lanes(total.data(), 1, &out);
  return out;
}

TEST(IntegerLanes, SummedFloatSumLanesDecodeToTheMergeForAnyRankCountAndOrder) {
  std::mt19937_64 random(7);
  for (int trial = 0; trial < 300; ++trial) {
    const int ranks = 1 + static_cast<int>(random() % 40);
    std::vector<ExactFloatSum> parts(static_cast<std::size_t>(ranks));
    ExactFloatSum merged;
    for (auto& part : parts) {
      const int adds = static_cast<int>(random() % 6);
      for (int a = 0; a < adds; ++a) part.add(random_float(random));
      merged.merge(part);
    }
    const ExactFloatSum through = summed_through_lanes<ExactFloatSum, kFloatSumLanes>(parts, random);
    EXPECT_EQ(0, std::memcmp(merged.limb, through.limb, sizeof merged.limb)) << "trial " << trial;
    EXPECT_EQ(merged.special, through.special) << "trial " << trial;
    EXPECT_EQ(float_bits(merged.to_float()), float_bits(through.to_float())) << "trial " << trial;
  }
}

TEST(IntegerLanes, SummedSquareSumLanesDecodeToTheMerge) {
  std::mt19937_64 random(11);
  std::uint64_t specials_seen = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<ExactSquareSum> parts(1 + random() % 40);
    ExactSquareSum merged;
    for (auto& part : parts) {
      // random_float gives infinities and NaNs too, which the lanes must carry.
      for (int a = static_cast<int>(random() % 6); a > 0; --a) part.add_square(random_float(random));
      merged.merge(part);
    }
    const ExactSquareSum through = summed_through_lanes<ExactSquareSum, kSquareSumLanes>(parts, random);
    EXPECT_EQ(0, std::memcmp(merged.limb, through.limb, sizeof merged.limb)) << "trial " << trial;
    EXPECT_EQ(merged.special, through.special) << "trial " << trial;
    specials_seen |= merged.special;
  }
  EXPECT_EQ(specials_seen, ExactSquareSum::kInfinity | ExactSquareSum::kNaN) << "the trials must add both kinds";
}

// The widest digits from 2^30 ranks: lanes near 2^62 carry correctly (the merge by doubling agrees).
TEST(IntegerLanes, FullDigitsFromTwoToTheThirtyRanksCarryExactly) {
  ExactFloatSum one;
  one.add(-float_from_bits(1u));  // -2^-149: every limb all ones in two's complement
  one.add(float_from_bits(0x7F7FFFFFu));
  std::vector<std::uint64_t> lanes(kFloatSumLanes);
  encode_lanes(&one, 1, lanes.data());
  for (auto& lane : lanes) lane <<= 30;  // the sum of 2^30 copies
  ExactFloatSum decoded, doubled = one;
  decode_lanes(lanes.data(), 1, &decoded);
  for (int i = 0; i < 30; ++i) {
    const ExactFloatSum copy = doubled;
    doubled.merge(copy);
  }
  EXPECT_EQ(0, std::memcmp(doubled.limb, decoded.limb, sizeof decoded.limb));
}

}  // namespace
}  // namespace bitparity::distributed
