// Decisions on fp32 inputs (input_keys.hpp's 32-bit keys, input_keys_f32_cpu.cpp): each threshold's
// boundary on x, against the definition v = fl32(x / absmax) and the search over v, at and around
// every boundary of every map, at absmaxes across fp32's range; the vector keys against the scalar
// ones; and the launcher against the strided path on blocks built from the boundaries.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "bitparity/kernels/code_map.hpp"
#include "bitparity/kernels/input_keys.hpp"
#include "bitparity/kernels/quant_body.hpp"
#include "bitparity/kernels/quantize.hpp"
#include "input_keys_cpu.hpp"
#include "input_keys_tie_map.hpp"

namespace bitparity {
namespace {

std::vector<float> absmaxes() {
  std::vector<float> values = {1.0f, 3.0f, 0x1p-149f, 0x1p-140f, 0x1p-126f, 0x1p-100f, 0x1p17f, 0x1p40f, 0x1p120f,
                               std::numeric_limits<float>::max(), 0x1.fffffep-1f, 0x1.000002p0f, 65504.0f,
                               // the largest absmaxes on signed keys, and the first ones past them
                               float_from_bits(0x3FFFFFFDu), float_from_bits(0x3FFFFFFEu), float_from_bits(0x3FFFFFFFu), 2.0f};
  std::mt19937 rng(5);
  std::uniform_int_distribution<std::uint32_t> finite_bits(1u, 0x7F7FFFFFu);
  for (int i = 0; i < 60; ++i) values.push_back(float_from_bits(finite_bits(rng)));
  return values;
}

std::vector<CodeTable> tables() {
  std::vector<CodeTable> all;
  for (const auto& info : quant_formats()) all.push_back(code_table(info.format));
  all.push_back(code_table(input_keys_tie_format()));
  return all;
}

// Inputs at every boundary of the block's keys and two keys either side, with ±0 and ±absmax.
std::vector<std::uint32_t> boundary_keys(const std::vector<std::uint32_t>& keys, int positions, float absmax) {
  std::vector<std::uint32_t> around = {f32_order_key(0x00000000u), f32_order_key(0x80000000u),
                                       f32_order_key(float_bits(absmax)), f32_order_key(float_bits(-absmax))};
  for (int position = 1; position < positions; ++position) {
    for (const int step : {-2, -1, 0, 1, 2}) around.push_back(keys[position] + static_cast<std::uint32_t>(step));
  }
  return around;
}

bool finite_within(std::uint32_t key, float absmax) {
  const float x = float_from_bits(f32_bits_of_key(key));
  return std::isfinite(x) && std::fabs(x) <= absmax;
}

TEST(InputKeysF32, ScalarKeysGiveTheSearchsCodeAtEveryBoundary) {
  int checked = 0;
  for (const CodeTable& table : tables()) {
    const int positions = 2 * table.first_step;
    for (const float absmax : absmaxes()) {
      std::vector<std::uint32_t> keys(kLevelKeys);
      input_threshold_keys_f32(table, absmax, keys.data());
      for (const std::uint32_t key : boundary_keys(keys, positions, absmax)) {
        if (!finite_within(key, absmax)) continue;
        const float x = float_from_bits(f32_bits_of_key(key));
        ASSERT_EQ(sorted_index_by_keys_f32(keys.data(), table.first_step, key),
                  nearest_sorted_index_by_search(table, normalize(x, absmax)))
            << "absmax " << std::hexfloat << absmax << " x " << x;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 100000);
}

TEST(InputKeysF32, VectorKeysEqualScalarKeys) {
  if (!cpu::cpu_has_avx512vbmi2()) GTEST_SKIP() << "this CPU has no AVX-512 VBMI2: the launcher keeps the fp32 path";
  std::vector<float> candidates = absmaxes();
  for (std::uint32_t bits = 1; bits < 0x7F800000u; bits += 0x1F3F1u) candidates.push_back(float_from_bits(bits));
  for (const CodeTable& table : tables()) {
    for (const float absmax : candidates) {
      std::vector<std::uint32_t> expected(kLevelKeys), got(kLevelKeys, 0);
      input_threshold_keys_f32(table, absmax, expected.data());
      ASSERT_TRUE(cpu::input_threshold_keys_f32_vector(table, absmax, got.data()));
      for (int position = 1; position < 2 * table.first_step; ++position) {
        ASSERT_EQ(got[position], expected[position]) << "absmax " << std::hexfloat << absmax << " position " << position;
      }
    }
  }
}

// Blocks of the boundary inputs of their own absmax (the absmax first, so that it is the block's),
// quantized contiguously (the key path) and through a stride-2 view (the body's element loop), with
// a block holding NaN and one of zeros, which the key path hands back, and an odd last block.
void expect_launcher_gives_the_strided_paths_codes(const QuantFormatInfo& info, std::int64_t blocksize) {
      const CodeTable& table = code_table(info.format);
      std::vector<float> values;
      std::mt19937 rng(static_cast<unsigned>(blocksize));
      for (const float absmax : absmaxes()) {
        std::vector<std::uint32_t> keys(kLevelKeys);
        input_threshold_keys_f32(table, absmax, keys.data());
        std::vector<float> block = {absmax};
        for (const std::uint32_t key : boundary_keys(keys, 2 * table.first_step, absmax)) {
          if (finite_within(key, absmax)) block.push_back(float_from_bits(f32_bits_of_key(key)));
        }
        while (static_cast<std::int64_t>(block.size()) % blocksize != 0) block.push_back(block[rng() % block.size()]);
        std::shuffle(block.begin() + 1, block.end(), rng);
        for (std::size_t start = 0; start < block.size(); start += static_cast<std::size_t>(blocksize)) block[start] = absmax;
        values.insert(values.end(), block.begin(), block.end());
      }
      values.insert(values.end(), static_cast<std::size_t>(blocksize), -0.0f);
      values.insert(values.end(), static_cast<std::size_t>(blocksize), 1.0f);
      values[values.size() - 3] = std::numeric_limits<float>::quiet_NaN();
      values.resize(values.size() + 37, 0.25f);
      const auto n = static_cast<std::int64_t>(values.size());
      std::vector<float> strided(2 * values.size(), 7.0f);
      for (std::size_t i = 0; i < values.size(); ++i) strided[2 * i] = values[i];
      const std::int64_t blocks = block_count(n, blocksize);
      const auto run = [&](const TensorView& input) {
        std::vector<std::uint8_t> codes(static_cast<std::size_t>(table.bits == 8 ? n : (n + 1) / 2), 0xAB);
        std::vector<std::uint8_t> flags(static_cast<std::size_t>(blocks));
        std::vector<float> absmax(static_cast<std::size_t>(blocks));
        quantize_blockwise(input, info.format, blocksize,
                           QuantizeOutputs{contiguous_view(codes.data(), table.bits == 8 ? DType::u8 : DType::packed4, Device::cpu(), {n}),
                                           contiguous_view(absmax.data(), DType::f32, Device::cpu(), {blocks}),
                                           contiguous_view(flags.data(), DType::u8, Device::cpu(), {blocks})});
        return codes;
      };
      TensorView strided_input = contiguous_view(strided.data(), DType::f32, Device::cpu(), {2 * n});
      strided_input.index = make_index({n}, {2}, 0);
      const std::vector<std::uint8_t> expected = run(strided_input);
      const std::vector<std::uint8_t> got = run(contiguous_view(values.data(), DType::f32, Device::cpu(), {n}));
      for (std::size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], expected[i]) << info.name << " blocksize " << blocksize << " code byte " << i;
      }
}

TEST(InputKeysF32, LauncherGivesTheStridedPathsCodes) {
  for (const auto& info : quant_formats()) {
    for (const std::int64_t blocksize : {64, 256, 4096}) expect_launcher_gives_the_strided_paths_codes(info, blocksize);
  }
}

// 8-bit blocks search their keys' upper halves where no two keys share one (input_keys_f32_cpu.cpp):
// the built-in signed map's blocks at the absmaxes above do, so the boundary inputs, which share
// the upper halves of the keys they surround, check the count against the key. A map with three
// values within 2^-11 of 0.5 has two thresholds in one upper half at absmax 1, whose blocks take
// the search on whole keys: the launcher must give the strided path's codes either way.
TEST(InputKeysF32, UpperHalfSearchCoversTheBlocksItApplies) {
  if (!cpu::cpu_has_avx512vbmi2()) GTEST_SKIP() << "this CPU has no AVX-512 VBMI2";
  const CodeTable& signed_map = code_table(QuantFormat::dynamic8_signed);
  for (const float absmax : {1.0f, 3.0f, 0x1p-100f, 0x1p120f, float_from_bits(0x3FFFFFFFu)}) {
    EXPECT_TRUE(cpu::f32_upper_half_search_applies(signed_map, absmax)) << std::hexfloat << absmax;
  }
  std::vector<float> values = {0.0f, -1.0f};
  for (int k = 1; k < 128; ++k) {
    values.push_back(static_cast<float>(k) / 128.0f);
    values.push_back(-static_cast<float>(k) / 128.0f);
  }
  std::replace(values.begin(), values.end(), 65.0f / 128.0f, 0.5f + 0x1p-12f);
  std::replace(values.begin(), values.end(), 66.0f / 128.0f, 0.5f + 0x1p-11f);
  const QuantFormat close = register_code_map(CodeMap{"input-keys-shared-upper-half", 8, values, "input_keys_f32_tests"});
  EXPECT_FALSE(cpu::f32_upper_half_search_applies(code_table(close), 1.0f));
  for (const std::int64_t blocksize : {256, 4096}) {
    expect_launcher_gives_the_strided_paths_codes(quant_format_info(close), blocksize);
    expect_launcher_gives_the_strided_paths_codes(quant_format_info(QuantFormat::dynamic8_unsigned), blocksize);
  }
}

// A 4-bit map of negative values and +0 (which blocks of zeros need), with fewer distinct values
// than codes: the search's last positions are +inf padding, which inputs above every threshold (here
// those in (-2^-7, 0], nearest to +0) compare with.
// On signed keys (absmax below 2) the padding must still lie above them, as it does unclamped only
// for positive inputs.
TEST(InputKeysF32, NegativeInputsAboveEveryThresholdStayBelowThePadding) {
  std::vector<float> values = {0.0f, -1.0f, -1.0f, -1.0f, -1.0f, -1.0f, -1.0f, -1.0f};
  for (int exponent = -1; exponent >= -6; --exponent) values.push_back(-std::ldexp(1.0f, exponent));
  values.push_back(-0.75f);
  values.push_back(-0.375f);
  const QuantFormat format = register_code_map(CodeMap{"input-keys-negative", 4, values, "input_keys_f32_tests: +inf padding"});
  std::vector<float> inputs;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> negative(-1.0f, 0.0f);
  for (int i = 0; i < 1024; ++i) inputs.push_back(i % 4 == 0 ? -std::ldexp(negative(rng), -6) : negative(rng));
  for (std::size_t start = 0; start < inputs.size(); start += 256) inputs[start] = -1.0f;  // absmax 1
  const auto n = static_cast<std::int64_t>(inputs.size());
  std::vector<float> strided(2 * inputs.size(), -0.5f);
  for (std::size_t i = 0; i < inputs.size(); ++i) strided[2 * i] = inputs[i];
  const auto run = [&](const TensorView& input) {
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(n / 2)), flags(4);
    std::vector<float> absmax(4);
    quantize_blockwise(input, format, 256,
                       QuantizeOutputs{contiguous_view(codes.data(), DType::packed4, Device::cpu(), {n}),
                                       contiguous_view(absmax.data(), DType::f32, Device::cpu(), {4}),
                                       contiguous_view(flags.data(), DType::u8, Device::cpu(), {4})});
    return codes;
  };
  TensorView strided_input = contiguous_view(strided.data(), DType::f32, Device::cpu(), {2 * n});
  strided_input.index = make_index({n}, {2}, 0);
  const std::vector<std::uint8_t> expected = run(strided_input);
  const std::vector<std::uint8_t> got = run(contiguous_view(inputs.data(), DType::f32, Device::cpu(), {n}));
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], expected[i]) << "code byte " << i;
}

// The 8-bit step's requantization by keys (codes_of_f32_by_keys) against quantize_contiguous, the
// body's: states of every scale with their exact absmax, for every 8-bit map, at block lengths
// that leave partial steps; blocks it must hand back (absmax 0, fewer than 2 * first_step values).
TEST(InputKeysF32, RequantizationGivesTheBodysCodes) {
  if (!cpu::cpu_has_avx512vbmi2()) GTEST_SKIP() << "this CPU has no AVX-512 VBMI2";
  std::mt19937 rng(17);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const auto& info : quant_formats()) {
    if (info.bits != 8) continue;
    const CodeTable& table = code_table(info.format);
    for (const std::int64_t count : {256, 300, 4096, 4095}) {
      for (const float scale : {1.0f, 0x1p-100f, 0x1p-140f, 0x1p100f, 3.0e-5f}) {
        std::vector<float> states(static_cast<std::size_t>(count));
        float absmax = 0;
        for (float& state : states) {
          state = normal(rng) * scale * (rng() % 8 == 0 ? 1e-6f : 1.0f);
          if (rng() % 64 == 0) state = rng() % 2 == 0 ? 0.0f : -0.0f;
          absmax = std::max(absmax, std::fabs(state));
        }
        std::vector<std::uint8_t> expected(states.size()), got(states.size(), 0xAB);
        quantize_contiguous<DType::f32>(table, states.data(), 0, expected.data(), absmax, 0, count, DecideNearest{});
        ASSERT_TRUE(cpu::codes_of_f32_by_keys(table, states.data(), absmax, got.data(), count));
        for (std::size_t j = 0; j < states.size(); ++j) {
          ASSERT_EQ(got[j], expected[j]) << info.name << " count " << count << " absmax " << std::hexfloat << absmax
                                         << " state " << states[j];
        }
      }
    }
    std::vector<float> zeros(256, 0.0f);
    std::vector<std::uint8_t> codes(256, 0xAB);
    EXPECT_FALSE(cpu::codes_of_f32_by_keys(table, zeros.data(), 0.0f, codes.data(), 256));
    EXPECT_FALSE(cpu::codes_of_f32_by_keys(table, zeros.data(), 1.0f, codes.data(), 2 * table.first_step - 2));
    EXPECT_EQ(codes[0], 0xAB) << "a block handed back must be left unwritten";
  }
}

}  // namespace
}  // namespace bitparity
