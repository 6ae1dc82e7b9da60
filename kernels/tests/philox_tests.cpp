#include <gtest/gtest.h>

#include "bitparity/kernels/philox.hpp"

namespace bitparity {
namespace {

struct KnownAnswer {
  Philox4x32 counter;
  std::uint32_t key0, key1;
  Philox4x32 expected;
};

// Random123's kat_vectors for philox4x32 with 10 rounds.
TEST(Philox, MatchesPublishedKnownAnswerVectors) {
  const KnownAnswer answers[] = {
      {{{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}}},
      {{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}}, 0xffffffffu, 0xffffffffu,
       {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}}},
      {{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}}, 0xa4093822u, 0x299f31d0u,
       {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}}},
  };
  for (const auto& answer : answers) {
    const Philox4x32 out = philox4x32_10(answer.counter, answer.key0, answer.key1);
    for (int lane = 0; lane < 4; ++lane) EXPECT_EQ(out.v[lane], answer.expected.v[lane]) << "lane " << lane;
  }
}

TEST(Philox, UniformIsInUnitIntervalAndExact) {
  EXPECT_EQ(uniform_from_bits(0u), 0.0f);
  EXPECT_EQ(uniform_from_bits(0xffffffffu), 1.0f - 0x1p-24f);
}

}  // namespace
}  // namespace bitparity
