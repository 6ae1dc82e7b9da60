// The CPU launchers' f16 conversions by instruction (HalfRunsF16C) against the body's element loops
// (HalfRunsByElement): every f16 pattern widened, and narrowing at every f16 value, every midpoint
// between neighbours and their fp32 neighbours, past the largest finite value, and random patterns.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "half_runs_cpu.hpp"

namespace bitparity {
namespace {

bool is_f16_nan(std::uint16_t h) { return (h & 0x7C00u) == 0x7C00u && (h & 0x03FFu) != 0; }

TEST(HalfRuns, F16cWidensEveryPatternToTheBodysBits) {
  if (!cpu::cpu_has_f16c()) GTEST_SKIP() << "this CPU has no F16C: the launchers take the body's loops";
  std::vector<std::uint16_t> halves(65536 + 13);  // a tail of one 8-lane vector and 5 elements after the 16-lane ones
  for (std::size_t i = 0; i < halves.size(); ++i) halves[i] = static_cast<std::uint16_t>(i);
  std::vector<float> by_instruction(halves.size()), by_element(halves.size());
  cpu::HalfRunsF16C{}.widen(halves.data(), by_instruction.data(), static_cast<std::int64_t>(halves.size()));
  HalfRunsByElement{}.widen(halves.data(), by_element.data(), static_cast<std::int64_t>(halves.size()));
  for (std::size_t i = 0; i < halves.size(); ++i) {
    const std::uint32_t got = float_bits(by_instruction[i]), want = float_bits(by_element[i]);
    if (is_f16_nan(halves[i])) {
      // A signalling NaN comes back quiet: the same sign and payload, the quiet bit set.
      ASSERT_EQ(got, want | 0x00400000u) << std::hex << "f16 0x" << halves[i];
    } else {
      ASSERT_EQ(got, want) << std::hex << "f16 0x" << halves[i];
    }
  }
}

std::vector<float> narrowing_edges() {
  std::vector<float> values;
  const auto with_neighbours = [&](float v) {
    values.push_back(v);
    values.push_back(std::nextafter(v, INFINITY));
    values.push_back(std::nextafter(v, -INFINITY));
  };
  for (std::uint32_t h = 0; h < 0x7C00u; ++h) {  // every finite magnitude, then both signs
    const float v = f16_to_float(static_cast<std::uint16_t>(h));
    const float next = f16_to_float(static_cast<std::uint16_t>(h + 1));  // 0x7C00 is infinity
    const float midpoint = h + 1 < 0x7C00u ? (v + next) / 2 : 65520.0f;  // exact: 12 significant bits
    for (const float sign : {1.0f, -1.0f}) {
      with_neighbours(sign * v);
      with_neighbours(sign * midpoint);
    }
  }
  for (const float v : {INFINITY, -INFINITY, 1e30f, -1e30f, 1e-40f, -1e-40f, 0x1p-26f, 0x1p-25f, 0x1.8p-25f}) {
    with_neighbours(v);
  }
  for (const std::uint32_t nan : {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFFBFFFFFu, 0x7FFFFFFFu}) {
    values.push_back(float_from_bits(nan));
  }
  std::mt19937 random(20261126);
  for (int i = 0; i < (1 << 20); ++i) values.push_back(float_from_bits(static_cast<std::uint32_t>(random())));
  // A tail of one 8-lane vector and 5 elements after the 16-lane ones.
  while (values.size() % 16 != 13) values.push_back(1.0f);
  return values;
}

TEST(HalfRuns, F16cNarrowsToTheBodysBitsAtEveryRoundingEdge) {
  if (!cpu::cpu_has_f16c()) GTEST_SKIP() << "this CPU has no F16C: the launchers take the body's loops";
  const std::vector<float> values = narrowing_edges();
  ASSERT_EQ(values.size() % 16, 13u);
  std::vector<std::uint16_t> by_instruction(values.size()), by_element(values.size());
  cpu::HalfRunsF16C{}.narrow(values.data(), by_instruction.data(), static_cast<std::int64_t>(values.size()));
  HalfRunsByElement{}.narrow(values.data(), by_element.data(), static_cast<std::int64_t>(values.size()));
  for (std::size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(by_instruction[i], by_element[i]) << "element " << i << " value " << std::hexfloat << values[i];
  }
}

}  // namespace
}  // namespace bitparity
