#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "bitparity/kernels/bits.hpp"
#include "bitparity/kernels/optimizer_element_ops.hpp"

namespace bitparity {
namespace {

// The products give ldexpf's bits for every k the trust factor can carry (0 .. ~900): exact scaling,
// overflow to a signed infinity at any step, subnormals scaled up, zeros kept.
TEST(ScaledUpByPowerOfTwo, GivesLdexpfsBits) {
  std::mt19937_64 random(3);
  for (int trial = 0; trial < 2000000; ++trial) {
    const float x = float_from_bits(static_cast<std::uint32_t>(random()));
    if (std::isnan(x)) continue;
    const int k = trial % 4 == 0 ? static_cast<int>(random() % 1000) : static_cast<int>(random() % 300);
    ASSERT_EQ(float_bits(std::ldexp(x, k)), float_bits(scaled_up_by_power_of_two(x, k))) << "x " << x << " k " << k;
  }
  EXPECT_TRUE(std::isnan(scaled_up_by_power_of_two(std::numeric_limits<float>::quiet_NaN(), 5)));
  EXPECT_EQ(scaled_up_by_power_of_two(std::numeric_limits<float>::denorm_min(), 276), std::ldexp(1.0f, 127));
  EXPECT_EQ(scaled_up_by_power_of_two(std::numeric_limits<float>::denorm_min(), 277), std::numeric_limits<float>::infinity());
}

TEST(SelectedByFlag, PicksBitsUnchanged) {
  const float nan_with_payload = float_from_bits(0x7FA00001u);
  EXPECT_EQ(float_bits(selected_by_flag(true, nan_with_payload, 1.0f)), 0x7FA00001u);
  EXPECT_EQ(float_bits(selected_by_flag(false, 1.0f, -0.0f)), 0x80000000u);
  EXPECT_EQ(selected_by_flag(true, 2.0f, 3.0f), 2.0f);
}

}  // namespace
}  // namespace bitparity
