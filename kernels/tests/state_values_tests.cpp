// The CPU 8-bit step's old states and 8-bit dequantize's fp32 outputs, looked up by byte permutes
// (state_values_cpu.hpp), against the body (StatesOfCodes, dequantized_in_fp32): every code of
// every 8-bit map, at absmaxes across fp32's range and its specials, in runs that leave a tail.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "bitparity/kernels/optim8_body.hpp"
#include "state_values_cpu.hpp"

namespace bitparity {
namespace {

std::vector<float> absmaxes_to_try() {
  std::vector<float> absmaxes = {1.0f, 3.0f, 0x1p-149f, 0x1p-126f, 0x1.fffffep127f, 0.0f, -0.0f, -2.5f,
                                 std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                                 std::numeric_limits<float>::quiet_NaN(), float_from_bits(0xFFC00001u)};
  std::mt19937 rng(11);
  std::uniform_int_distribution<std::uint32_t> finite_bits(1u, 0x7F7FFFFFu);
  for (int i = 0; i < 200; ++i) absmaxes.push_back(float_from_bits(finite_bits(rng)));
  return absmaxes;
}

// Every code in each of four orders (ascending, descending, and two shuffles), then 37 more: the
// vector part covers whole 64s, the body the tail.
std::vector<std::uint8_t> every_code_in_several_orders() {
  std::mt19937 rng(11);
  std::vector<std::uint8_t> codes;
  for (int c = 0; c < 256; ++c) codes.push_back(static_cast<std::uint8_t>(c));
  for (int c = 255; c >= 0; --c) codes.push_back(static_cast<std::uint8_t>(c));
  for (int round = 0; round < 2; ++round) {
    std::vector<std::uint8_t> shuffled(codes.begin(), codes.begin() + 256);
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    codes.insert(codes.end(), shuffled.begin(), shuffled.end());
  }
  for (int c = 0; c < 37; ++c) codes.push_back(static_cast<std::uint8_t>(c * 7));
  return codes;
}

// check(info, table, absmax) for every 8-bit map at every absmax to try, until one fails.
template <class Check>
void for_every_8bit_map_and_absmax(const Check& check) {
  int tables = 0;
  for (const auto& info : quant_formats()) {
    if (info.bits != 8) continue;
    ++tables;
    for (const float absmax : absmaxes_to_try()) {
      check(info, code_table(info.format), absmax);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  EXPECT_GE(tables, 4);
}

TEST(StateValues, ByteLookupGivesTheBodysStatesForEveryCode) {
  if (!cpu::cpu_has_avx512vbmi2()) GTEST_SKIP() << "no AVX-512 VBMI2 on this CPU: the launcher keeps the body's loop";
  const std::vector<std::uint8_t> codes = every_code_in_several_orders();
  const auto count = static_cast<std::int64_t>(codes.size());
  for_every_8bit_map_and_absmax([&](const QuantFormatInfo& info, const CodeTable& table, float absmax) {
    std::vector<float> expected(codes.size()), got(codes.size(), -1.0f);
    StatesOfCodes{}(table, codes.data(), absmax, expected.data(), count);
    cpu::StatesOfCodesVector{}(table, codes.data(), absmax, got.data(), count);
    ASSERT_EQ(cpu::states_of_codes_avx512(table, codes.data(), absmax, got.data(), count), count - count % 64);
    for (std::size_t j = 0; j < codes.size(); ++j) {
      ASSERT_EQ(float_bits(got[j]), float_bits(expected[j]))
          << info.name << " absmax " << std::hexfloat << absmax << " code " << std::dec << int{codes[j]} << " at " << j;
    }
  });
}

// Dequantize's outputs: the canonical NaN where the product is NaN (0 x infinity, a NaN absmax of
// any payload), the product's bits everywhere else.
TEST(StateValues, ByteLookupGivesTheBodysDequantizedFp32ForEveryCode) {
  if (!cpu::cpu_has_avx512vbmi2()) GTEST_SKIP() << "no AVX-512 VBMI2 on this CPU: the launcher keeps the body's table";
  const std::vector<std::uint8_t> codes = every_code_in_several_orders();
  const auto count = static_cast<std::int64_t>(codes.size());
  for_every_8bit_map_and_absmax([&](const QuantFormatInfo& info, const CodeTable& table, float absmax) {
    std::vector<float> got(codes.size(), -1.0f);
    const std::int64_t done = cpu::dequantized_f32_of_codes_avx512(table, codes.data(), absmax, got.data(), count);
    ASSERT_EQ(done, count - count % 64);
    for (std::int64_t j = 0; j < done; ++j) {
      const float expected = dequantized_in_fp32<DType::f32>(table.code_values[codes[j]], absmax);
      ASSERT_EQ(float_bits(got[j]), float_bits(expected))
          << info.name << " absmax " << std::hexfloat << absmax << " code " << std::dec << int{codes[j]} << " at " << j;
    }
    for (std::int64_t j = done; j < count; ++j) ASSERT_EQ(got[j], -1.0f) << "past the whole 64s, at " << j;
  });
}

}  // namespace
}  // namespace bitparity
