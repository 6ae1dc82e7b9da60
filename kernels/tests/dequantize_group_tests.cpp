// The CUDA launcher's contiguous dequantize unit (dequantize_group), run here on the host: every
// code in every position of a 16-byte load, for every map and output dtype, with absmax values that
// take the fp32 lanes and ones that take the double product, gives the element body's bits.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>
#include <vector>

#include "bitparity/kernels/quant_body.hpp"
#include "bitparity/kernels/quant_format.hpp"
#include "absmax_near_ties.hpp"

namespace bitparity {
namespace {

// Absmax values: ordinary, at the fp32 overflow edge, tiny enough that bf16 keeps the double
// product, subnormal, zero, and the non-finite absmax of a block that held NaN or infinity. Each is
// tried with every code in every position; absmax_near_ties' values (products next to ties and to
// the fp32-lane condition) with every code once.
const std::vector<float> kAbsmaxes = {1.0f,     0.8125f,  3.0e5f,    1.7e38f,  std::numeric_limits<float>::max(),
                                      1.0e-30f, 3.0e-36f, 1.0e-40f,  0.0f,     std::numeric_limits<float>::quiet_NaN(),
                                      std::numeric_limits<float>::infinity()};

template <DType D, int Bits>
void expect_group_matches_element_path(const CodeTable& table, std::string_view name) {
  constexpr int kElements = kGroupElements<Bits>;
  constexpr int kCodes = Bits == 8 ? 256 : 16;
  using Word = OutputWord<D>;
  const std::vector<float> near_ties = absmax_near_ties(table);
  // Round r puts code (r + j) % kCodes at element j: every code reaches every position.
  for (int round = 0; round < kCodes; ++round) {
    std::uint8_t bytes[16] = {};
    std::uint32_t codes[kElements];
    for (int j = 0; j < kElements; ++j) codes[j] = static_cast<std::uint32_t>((round + j) % kCodes);
    for (int j = 0; j < kElements; ++j) {
      if (Bits == 8) {
        bytes[j] = static_cast<std::uint8_t>(codes[j]);
      } else {
        bytes[j / 2] |= static_cast<std::uint8_t>(j % 2 == 0 ? codes[j] << 4 : codes[j]);
      }
    }
    std::uint32_t words[4];
    std::memcpy(words, bytes, sizeof(words));  // the little-endian words of a 16-byte load
    std::vector<float> absmaxes = kAbsmaxes;
    if (round % kElements == 0) absmaxes.insert(absmaxes.end(), near_ties.begin(), near_ties.end());
    for (float absmax : absmaxes) {
      Word got[kElements];
      dequantize_group<D, Bits>(table, table.code_values, words, absmax, got);
      for (int j = 0; j < kElements; ++j) {
        Word expected[1];
        store_rounded_double_as<D>(expected, 0, dequantized_exact(table, static_cast<std::uint8_t>(codes[j]), absmax));
        ASSERT_EQ(std::memcmp(&got[j], &expected[0], sizeof(Word)), 0)
            << name << " " << dtype_name(D) << " code " << codes[j] << " at element " << j << ", absmax " << std::hexfloat
            << absmax;
      }
    }
  }
}

template <int Bits>
void expect_every_dtype(const CodeTable& table, std::string_view name) {
  expect_group_matches_element_path<DType::f32, Bits>(table, name);
  expect_group_matches_element_path<DType::f16, Bits>(table, name);
  expect_group_matches_element_path<DType::bf16, Bits>(table, name);
}

TEST(DequantizeGroup, EveryCodeInEveryPositionGivesTheElementPathsBits) {
  for (const QuantFormatInfo& info : quant_formats()) {
    const CodeTable& table = code_table(info.format);
    if (table.bits == 8) {
      expect_every_dtype<8>(table, info.name);
    } else {
      expect_every_dtype<4>(table, info.name);
    }
  }
}

}  // namespace
}  // namespace bitparity
