// Code maps as values: the built-in maps, their fused-linspace variants and FP4's two zeros, and the
// registration of a map read at run time.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "bitparity/kernels/bits.hpp"
#include "bitparity/kernels/code_map.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/quant_body.hpp"

namespace bitparity {
namespace {

int entries_differing(const std::vector<float>& a, const std::vector<float>& b) {
  int count = 0;
  for (std::size_t i = 0; i < a.size(); ++i) count += float_bits(a[i]) != float_bits(b[i]) ? 1 : 0;
  return count;
}

// The fused variants are the maps bitsandbytes stores on x86 (torch's AVX2/AVX512 linspace). With
// torch 2.11 they were measured to differ from the unfused maps in 42 / 31 / 95 entries, and the
// fused linear map's code 128 to be 2^-28: the one-rounding model reproduces all four figures.
TEST(CodeMaps, FusedVariantsDifferWhereTorchsVectorKernelsDo) {
  EXPECT_EQ(entries_differing(code_map(QuantFormat::dynamic8_signed).values,
                              code_map(QuantFormat::dynamic8_signed_fused).values), 42);
  EXPECT_EQ(entries_differing(code_map(QuantFormat::dynamic8_unsigned).values,
                              code_map(QuantFormat::dynamic8_unsigned_fused).values), 31);
  EXPECT_EQ(entries_differing(code_map(QuantFormat::linear8).values, code_map(QuantFormat::linear8_fused).values), 95);
  EXPECT_EQ(code_map(QuantFormat::linear8_fused).values[128], 0x1p-28f);
  EXPECT_EQ(float_bits(code_map(QuantFormat::linear8).values[128]), 0u);
}

TEST(CodeMaps, Fp4OffersBothZeroSigns) {
  EXPECT_EQ(float_bits(code_map(QuantFormat::fp4).values[8]), 0x80000000u);
  EXPECT_EQ(float_bits(code_map(QuantFormat::fp4_positive_zero).values[8]), 0u);
  for (int code = 0; code < 16; ++code) {
    if (code == 8) continue;
    EXPECT_EQ(float_bits(code_map(QuantFormat::fp4).values[code]), float_bits(code_map(QuantFormat::fp4_positive_zero).values[code]));
  }
  // +0 is emitted as code 0 in both: the two zeros decide as one value, the lowest code wins.
  EXPECT_EQ(code_table(QuantFormat::fp4_positive_zero).zero_code, 0);
  EXPECT_EQ(code_table(QuantFormat::fp4_positive_zero).sorted_count, 15);
}

TEST(CodeMaps, EveryBuiltInMapIsRegisteredUnderItsName) {
  const auto& builtins = builtin_code_maps();
  const auto formats = quant_formats();
  ASSERT_GE(formats.size(), builtins.size());
  for (std::size_t i = 0; i < builtins.size(); ++i) {
    EXPECT_EQ(formats[i].name, builtins[i].name);
    EXPECT_EQ(static_cast<std::size_t>(formats[i].format), i);
    EXPECT_TRUE(formats[i].builtin);
    EXPECT_EQ(parse_quant_format(builtins[i].name), formats[i].format);
    EXPECT_FALSE(builtins[i].provenance.empty());
  }
}

CodeMap ramp_map(const std::string& name) {
  CodeMap map{name, 4, {}, "a test ramp"};
  for (int code = 0; code < 16; ++code) map.values.push_back(static_cast<float>(code - 7) / 8.0f);
  return map;
}

TEST(CodeMaps, ARegisteredMapQuantizesToItsNearestCodes) {
  const QuantFormat format = register_code_map(ramp_map("test-ramp"));
  EXPECT_EQ(register_code_map(ramp_map("test-ramp")), format) << "the same map again is the same format";
  EXPECT_FALSE(quant_format_info(format).builtin);
  const CodeTable& table = code_table(format);
  EXPECT_EQ(table.zero_code, 7);
  EXPECT_EQ(table.sorted_codes[nearest_sorted_index(table, 0.3f)], 7 + 2);  // 0.25 is nearest
  EXPECT_EQ(table.sorted_codes[nearest_sorted_index(table, 0.0625f)], 7);  // a tie goes to the lower code
  EXPECT_EQ(table.sorted_codes[nearest_sorted_index(table, std::nextafter(0.0625f, 1.0f))], 8);
}

std::string refusal(const CodeMap& map) {
  try {
    register_code_map(map);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(CodeMaps, BadMapsAreRefusedWithTheFix) {
  CodeMap map = ramp_map("test-other-values");
  register_code_map(map);
  map.values[0] = -0.9f;
  EXPECT_NE(refusal(map).find("already registered with other values"), std::string::npos);
  map = ramp_map("bad name!");
  EXPECT_NE(refusal(map).find("letters, digits"), std::string::npos);
  map = ramp_map("test-count");
  map.values.pop_back();
  EXPECT_NE(refusal(map).find("needs 16"), std::string::npos);
  map = ramp_map("test-nan");
  map.values[3] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_NE(refusal(map).find("code 3 is not finite"), std::string::npos);
  map = ramp_map("test-no-zero");
  map.values[7] = -0.0f;
  EXPECT_NE(refusal(map).find("+0.0"), std::string::npos);
  map = ramp_map("test-far-apart");
  map.values[8] = 1e-30f;  // between 0 and its upper neighbour, 2^70 times smaller than it
  EXPECT_NE(refusal(map).find("too far apart"), std::string::npos);
  // The values are shown as they are: a subnormal one is not printed as 0.
  map = ramp_map("test-subnormal-neighbour");
  map.values[8] = 1e-45f;
  EXPECT_NE(refusal(map).find("1.40129846e-45"), std::string::npos) << refusal(map);
  map = ramp_map("test-beyond-one");
  map.values[15] = 2.0f;
  EXPECT_NE(refusal(map).find("every value lies in [-1, 1]"), std::string::npos);
  map = ramp_map("test-bits");
  map.bits = 6;
  EXPECT_NE(refusal(map).find("use 8"), std::string::npos);
  EXPECT_THROW(parse_quant_format("test-count"), Error) << "a refused map is not registered";
}

}  // namespace
}  // namespace bitparity
