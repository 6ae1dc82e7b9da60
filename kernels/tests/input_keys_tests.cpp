// Decisions on 16-bit inputs (input_keys.hpp, input_keys_cpu.hpp): thresholds on v turned into
// thresholds on x once per block. These tests hold them to the definition, v = fl32(x / absmax) and
// the search over v, on every f16 and bf16 pattern, at the edges' exact ties, and through the CPU
// launcher against the strided path (the body's element loop).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
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

float widen(DType dtype, std::uint16_t bits) { return dtype == DType::f16 ? f16_to_float(bits) : bf16_to_float(bits); }

bool finite_pattern(DType dtype, std::uint16_t bits) { return std::isfinite(widen(dtype, bits)); }

std::vector<std::uint16_t> level_keys(const CodeTable& table, DType dtype, float absmax) {
  std::vector<std::uint16_t> keys(kLevelKeys);
  if (dtype == DType::f16) {
    input_threshold_keys<DType::f16>(table, absmax, keys.data());
  } else {
    input_threshold_keys<DType::bf16>(table, absmax, keys.data());
  }
  return keys;
}

// Block absmaxes at the dtype's edges (smallest subnormal, smallest normal, largest finite), at
// powers of two (where x / absmax is exact) and at values with full significands.
std::vector<float> absmaxes(DType dtype) {
  if (dtype == DType::f16) return {1.0f, 0x1p-24f, 0x1p-14f, 65504.0f, 3.0f, f16_to_float(0x2E66), 1000.0f, f16_to_float(0x3BFF), 0x1p-10f};
  return {1.0f, 0x1p-133f, 0x1p-126f, bf16_to_float(0x7F7F), 0x1p17f, 0x1p100f, bf16_to_float(0x3DCD), bf16_to_float(0x3F7F), 3.0f};
}

// The code of the search over v (the definition) against the count over keys, for every finite
// pattern x of the dtype, at every absmax above, for every registered map.
TEST(InputKeys, ScalarKeysGiveTheSearchsCodeForEvery16BitPattern) {
  for (const auto& info : quant_formats()) {
    const CodeTable& table = code_table(info.format);
    for (const DType dtype : {DType::f16, DType::bf16}) {
      for (const float absmax : absmaxes(dtype)) {
        const std::vector<std::uint16_t> keys = level_keys(table, dtype, absmax);
        for (std::uint32_t bits = 0; bits < 0x10000u; ++bits) {
          const auto pattern = static_cast<std::uint16_t>(bits);
          if (!finite_pattern(dtype, pattern)) continue;
          const int expected = nearest_sorted_index_by_search(table, normalize(widen(dtype, pattern), absmax));
          const int got = sorted_index_by_keys(keys.data(), table.first_step, narrow_order_key(pattern));
          ASSERT_EQ(got, expected) << info.name << " " << dtype_name(dtype) << " absmax " << std::hexfloat << absmax
                                   << " x " << widen(dtype, pattern) << " (0x" << std::hex << bits << ")";
        }
      }
    }
  }
}

// Keys order as values: -0 just below +0, the infinities at the ends of the finite ones.
TEST(InputKeys, KeysOrderAsValues) {
  for (const DType dtype : {DType::f16, DType::bf16}) {
    std::vector<std::uint16_t> finite;
    for (std::uint32_t bits = 0; bits < 0x10000u; ++bits) {
      if (finite_pattern(dtype, static_cast<std::uint16_t>(bits))) finite.push_back(static_cast<std::uint16_t>(bits));
    }
    std::sort(finite.begin(), finite.end(), [](std::uint16_t a, std::uint16_t b) { return narrow_order_key(a) < narrow_order_key(b); });
    for (std::size_t i = 1; i < finite.size(); ++i) {
      ASSERT_LE(widen(dtype, finite[i - 1]), widen(dtype, finite[i])) << dtype_name(dtype) << " 0x" << std::hex << finite[i];
      ASSERT_EQ(narrow_bits_of_key(narrow_order_key(finite[i])), finite[i]);
    }
    EXPECT_EQ(narrow_order_key(0x8000), narrow_order_key(0x0000) - 1) << "-0 just below +0";
  }
}

CodeTable tie_table() { return code_table(input_keys_tie_format()); }

TEST(InputKeys, AnEdgeEqualToAnInputFollowsTheTieRule) {
  const CodeTable table = tie_table();
  int ties = 0;
  for (const float absmax : {0x1p17f, 0x1p18f, 0x1p40f, 0x1p120f, 3.0f * 0x1p17f}) {
    for (int i = 0; i < 2 * table.first_step - 1; ++i) {
      const double bound = table.level_edges[i] * static_cast<double>(absmax);
      if (std::isinf(bound)) continue;  // the +inf padding
      const std::uint16_t at_most = key_at_most<DType::bf16>(bound);
      if (narrow_as_double<DType::bf16>(narrow_bits_of_key(at_most)) != bound) continue;
      ++ties;
      // The input equal to the bound and its neighbours: each must get the definition's code.
      const std::vector<std::uint16_t> keys = level_keys(table, DType::bf16, absmax);
      for (const int step : {-1, 0, 1}) {
        const auto key = static_cast<std::uint16_t>(at_most + step);
        const std::uint16_t pattern = narrow_bits_of_key(key);
        const int expected = nearest_sorted_index_by_search(table, normalize(bf16_to_float(pattern), absmax));
        EXPECT_EQ(sorted_index_by_keys(keys.data(), table.first_step, key), expected)
            << "absmax " << std::hexfloat << absmax << " x " << bf16_to_float(pattern) << " edge " << table.level_edges[i]
            << (table.level_edge_closed[i] != 0 ? " closed" : " open");
      }
    }
  }
  EXPECT_GE(ties, 4) << "the test must reach bounds that are bf16 values";
}

TEST(InputKeys, VectorKeysEqualScalarKeys) {
  if (!cpu::cpu_has_avx512vbmi2()) GTEST_SKIP() << "this CPU has no AVX-512 VBMI2: the launcher keeps the fp32 path";
  std::vector<CodeTable> tables;
  for (const auto& info : quant_formats()) tables.push_back(code_table(info.format));
  tables.push_back(tie_table());
  for (const DType dtype : {DType::f16, DType::bf16}) {
    // Every 7th positive finite pattern (keys from fp32 fmas and, at small absmaxes or with the tie
    // map, from doubles), and the listed edges.
    std::vector<float> candidates = absmaxes(dtype);
    for (std::uint32_t bits = 1; bits < 0x8000u; bits += 7) {
      if (finite_pattern(dtype, static_cast<std::uint16_t>(bits))) candidates.push_back(widen(dtype, static_cast<std::uint16_t>(bits)));
    }
    for (const CodeTable& table : tables) {
      for (const float absmax : candidates) {
        const std::vector<std::uint16_t> expected = level_keys(table, dtype, absmax);
        std::vector<std::uint16_t> got(kLevelKeys, 0);
        ASSERT_TRUE(cpu::input_threshold_keys_vector(table, dtype, absmax, got.data()));
        for (int position = 0; position < 2 * table.first_step; ++position) {
          ASSERT_EQ(got[position], expected[position]) << dtype_name(dtype) << " absmax " << std::hexfloat << absmax
                                                       << " position " << position;
        }
      }
    }
  }
}

// Every finite pattern in shuffled blocks (each block's absmax its own), quantized contiguously (the
// launcher's key path where the CPU has it) and through a stride-2 view (the body's element loop).
// Also a block with NaN and one of zeros, which the key path hands back, and a last partial block of
// odd length (a 4-bit tensor's last byte holds one element).
void expect_contiguous_equals_strided(QuantFormat format, DType dtype, std::int64_t blocksize,
                                      const std::vector<std::uint16_t>& patterns) {
  const CodeTable& table = code_table(format);
  const auto n = static_cast<std::int64_t>(patterns.size());
  std::vector<std::uint16_t> strided(2 * patterns.size(), 0x3C00);
  for (std::size_t i = 0; i < patterns.size(); ++i) strided[2 * i] = patterns[i];
  const std::int64_t blocks = block_count(n, blocksize);
  const std::int64_t code_bytes = table.bits == 8 ? n : (n + 1) / 2;
  const auto run = [&](const TensorView& input) {
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(code_bytes), 0xAB), flags(static_cast<std::size_t>(blocks));
    std::vector<float> absmax(static_cast<std::size_t>(blocks));
    const QuantizeOutputs outputs{contiguous_view(codes.data(), table.bits == 8 ? DType::u8 : DType::packed4, Device::cpu(), {n}),
                                  contiguous_view(absmax.data(), DType::f32, Device::cpu(), {blocks}),
                                  contiguous_view(flags.data(), DType::u8, Device::cpu(), {blocks})};
    quantize_blockwise(input, format, blocksize, outputs);
    return std::make_tuple(codes, absmax, flags);
  };
  TensorView strided_input = contiguous_view(strided.data(), dtype, Device::cpu(), {2 * n});
  strided_input.index = make_index({n}, {2}, 0);
  std::vector<std::uint16_t> contiguous = patterns;
  const auto [codes, absmax, flags] = run(contiguous_view(contiguous.data(), dtype, Device::cpu(), {n}));
  const auto [expected_codes, expected_absmax, expected_flags] = run(strided_input);
  const std::string what = std::string(quant_format_info(format).name) + " " + std::string(dtype_name(dtype)) +
                           " blocksize " + std::to_string(blocksize);
  ASSERT_EQ(flags, expected_flags) << what;
  for (std::size_t b = 0; b < absmax.size(); ++b) {
    ASSERT_EQ(float_bits(absmax[b]), float_bits(expected_absmax[b])) << what << " block " << b;
  }
  for (std::size_t i = 0; i < codes.size(); ++i) {
    ASSERT_EQ(codes[i], expected_codes[i]) << what << " code byte " << i << " (block " << (table.bits == 8 ? i : 2 * i) / blocksize << ")";
  }
}

std::vector<std::uint16_t> every_finite_pattern_shuffled(DType dtype, std::int64_t blocksize) {
  std::vector<std::uint16_t> patterns;
  for (std::uint32_t bits = 0; bits < 0x10000u; ++bits) {
    if (finite_pattern(dtype, static_cast<std::uint16_t>(bits))) patterns.push_back(static_cast<std::uint16_t>(bits));
  }
  std::mt19937 rng(static_cast<unsigned>(blocksize) * 7 + static_cast<unsigned>(dtype));
  std::shuffle(patterns.begin(), patterns.end(), rng);
  patterns.insert(patterns.begin(), static_cast<std::size_t>(blocksize), 0x8000);  // a block of zeros (-0)
  patterns[static_cast<std::size_t>(blocksize) + 3] = dtype == DType::f16 ? 0x7E00 : 0x7FC0;  // NaN in the next
  if (patterns.size() % 2 == 0) patterns.pop_back();
  return patterns;
}

TEST(InputKeys, LauncherGivesTheStridedPathsCodesOnEvery16BitPattern) {
  for (const auto& info : quant_formats()) {
    for (const DType dtype : {DType::f16, DType::bf16}) {
      for (const std::int64_t blocksize : {64, 256, 4096}) {
        expect_contiguous_equals_strided(info.format, dtype, blocksize, every_finite_pattern_shuffled(dtype, blocksize));
      }
    }
  }
}

// The launcher takes runs of blocks by keys, scanning each block while the one before is searched
// (input_keys_cpu.cpp): blocks the body must take (zeros, NaN, infinity) right after key blocks, two
// in a row, first and last, in a launch long enough for two threads and for moved bf16 keys.
TEST(InputKeys, LauncherHandsBackBlocksInsideARunOfKeyBlocks) {
  constexpr std::int64_t kBlocks = 300;
  for (const auto& info : quant_formats()) {
    for (const DType dtype : {DType::f16, DType::bf16}) {
      for (const std::int64_t blocksize : {64, 256}) {
        std::mt19937 rng(static_cast<unsigned>(blocksize) + 3 * static_cast<unsigned>(dtype));
        std::vector<std::uint16_t> patterns;
        while (static_cast<std::int64_t>(patterns.size()) < kBlocks * blocksize) {
          const auto bits = static_cast<std::uint16_t>(rng());
          if (finite_pattern(dtype, bits)) patterns.push_back(bits);
        }
        const std::uint16_t nan = dtype == DType::f16 ? 0x7E00 : 0x7FC0, infinity = dtype == DType::f16 ? 0xFC00 : 0xFF80;
        const auto fill = [&](std::int64_t block, std::uint16_t bits) {
          std::fill_n(patterns.begin() + block * blocksize, blocksize, bits);
        };
        fill(0, 0x0000);
        fill(5, 0x8000);
        fill(6, 0x0000);
        patterns[static_cast<std::size_t>(9 * blocksize + 7)] = nan;
        patterns[static_cast<std::size_t>(150 * blocksize + blocksize - 1)] = infinity;
        patterns[static_cast<std::size_t>(151 * blocksize)] = nan;
        patterns[static_cast<std::size_t>((kBlocks - 1) * blocksize + 1)] = nan;
        patterns.resize(patterns.size() + 37, 0x3400);  // an odd last block after the NaN one
        expect_contiguous_equals_strided(info.format, dtype, blocksize, patterns);
      }
    }
  }
}

// A 4-bit map whose edge between its smallest negative value -a and 0 is -2^-126 + 0.75 * 2^-133 +
// 2^-150: at absmax 1 its bf16 key is -2^-126 (0x8080), whose neighbour toward zero is subnormal,
// a whole step away; at absmax 2 the bound lies half a step inside the binade above, where
// rounding toward -inf gives -2^-125 + 2^-133, not the moved -2^-125. Neighbours a factor 2^29
// apart at most, for exact midpoints.
QuantFormat min_normal_key_format() {
  const float a = std::ldexp(1.0f, -125) - 1.5f * std::ldexp(1.0f, -133);
  std::vector<float> values = {0.0f, 0.0f, -a, 1.0f, -1.0f, 0.5f, -0.25f};
  for (const int exponent : {-97, -68, -39, -10}) values.push_back(-std::ldexp(1.0f, exponent));
  for (const int exponent : {-120, -91, -62, -33, -4}) values.push_back(std::ldexp(1.0f, exponent));
  return register_code_map(CodeMap{"input-keys-min-normal", 4, values, "input_keys_tests: a bf16 key at -2^-126"});
}

// bf16 keys moved by the absmax's exponent (Bf16KeysByMantissa) against the keys computed for the
// block, by the vector code at every positive normal bf16 absmax and by the scalar definition at
// every fifth: equal wherever the move applies, and the move applies over most of the exponent
// range for the built-in maps. The tie map's keys and the min-normal map's key at -2^-126 must not
// move (moving them gives other keys).
TEST(InputKeys, MovedBf16KeysEqualComputedKeysAtEveryAbsmax) {
  if (!cpu::cpu_has_avx512vbmi2()) GTEST_SKIP() << "this CPU has no AVX-512 VBMI2: the launcher keeps the fp32 path";
  const std::string tie_name(quant_format_info(input_keys_tie_format()).name);
  const std::string min_normal_name(quant_format_info(min_normal_key_format()).name);
  std::vector<std::pair<std::string, CodeTable>> tables;
  for (const auto& info : quant_formats()) tables.emplace_back(info.name, code_table(info.format));
  for (const auto& [name, table] : tables) {
    auto moved = std::make_unique<cpu::Bf16KeysByMantissa>();
    const bool usable = cpu::build_bf16_keys_by_mantissa(table, *moved);
    if (name != tie_name && name != min_normal_name) {
      ASSERT_TRUE(usable) << name << ": every built-in map's keys are normal at absmax in [1, 2)";
    }
    if (!usable) continue;
    int moved_absmaxes = 0;
    std::vector<std::uint16_t> got(kLevelKeys), expected(kLevelKeys), defined(kLevelKeys);
    for (std::uint16_t absmax_bits = 0x0080; absmax_bits <= 0x7F7F; ++absmax_bits) {
      if (!cpu::input_threshold_keys_moved(table, *moved, absmax_bits, got.data())) continue;
      ++moved_absmaxes;
      const float absmax = bf16_to_float(absmax_bits);
      ASSERT_TRUE(cpu::input_threshold_keys_vector(table, DType::bf16, absmax, expected.data()));
      const bool scalar_too = absmax_bits % 5 == 0;
      if (scalar_too) input_threshold_keys<DType::bf16>(table, absmax, defined.data());
      for (int position = 1; position < 2 * table.first_step; ++position) {
        ASSERT_EQ(got[position], expected[position]) << name << " absmax " << std::hexfloat << absmax << " (0x" << std::hex
                                                     << absmax_bits << ") position " << std::dec << position;
        if (scalar_too) {
          ASSERT_EQ(got[position], defined[position]) << name << " absmax " << std::hexfloat << absmax << " (0x"
                                                      << std::hex << absmax_bits << ") position " << std::dec << position;
        }
      }
    }
    EXPECT_GE(moved_absmaxes, 128 * 150) << name << ": the move should cover at least 150 binades of absmax";
  }
}

// Blocks whose absmaxes sweep bf16's exponents, each holding inputs at and next to its keys, against
// the strided path: through the launcher, with enough blocks to move the keys (and, at the ends of
// the range, to compute them), and block by block with the moved keys given, so that the test
// does not rest on the launcher choosing them.
TEST(InputKeys, LauncherWithMovedBf16KeysGivesTheStridedPathsCodes) {
  constexpr std::int64_t kBlocksize = 256, kBlocks = 3 * 254;
  static_assert(kBlocks >= cpu::kBlocksForMovedKeys, "the launcher must move the keys");
  for (const auto& info : quant_formats()) {
    const CodeTable& table = code_table(info.format);
    std::mt19937 rng(static_cast<unsigned>(info.format) + 11);
    std::vector<std::uint16_t> patterns;
    std::vector<std::uint16_t> keys(kLevelKeys);
    for (std::int64_t block = 0; block < kBlocks; ++block) {
      const auto exponent = static_cast<std::uint16_t>(1 + block % 254);
      const auto absmax_bits = static_cast<std::uint16_t>((exponent << 7) | (rng() & 0x7F));
      const float absmax = bf16_to_float(absmax_bits);
      input_threshold_keys<DType::bf16>(table, absmax, keys.data());
      patterns.push_back(absmax_bits);
      for (std::int64_t i = 1; i < kBlocksize; ++i) {
        const int position = 1 + static_cast<int>(rng() % static_cast<unsigned>(2 * table.first_step - 1));
        const auto pattern = narrow_bits_of_key(static_cast<std::uint16_t>(keys[position] + static_cast<int>(rng() % 3) - 1));
        const float x = bf16_to_float(pattern);
        patterns.push_back(std::isfinite(x) && std::fabs(x) <= absmax ? pattern : static_cast<std::uint16_t>(rng() & 0x8000u));
      }
    }
    expect_contiguous_equals_strided(info.format, DType::bf16, kBlocksize, patterns);
    // Launches after the map's first take the keys it kept (quantize_cpu.cpp): the blocks again, last first.
    std::vector<std::uint16_t> reversed;
    for (std::int64_t block = kBlocks - 1; block >= 0; --block) {
      reversed.insert(reversed.end(), patterns.begin() + block * kBlocksize, patterns.begin() + (block + 1) * kBlocksize);
    }
    expect_contiguous_equals_strided(info.format, DType::bf16, kBlocksize, reversed);

    auto moved = std::make_unique<cpu::Bf16KeysByMantissa>();
    if (!cpu::build_bf16_keys_by_mantissa(table, *moved)) continue;
    const std::int64_t n = kBlocks * kBlocksize;
    const std::int64_t code_bytes = table.bits == 8 ? n : n / 2;
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(code_bytes)), expected(codes.size()), flags(kBlocks);
    std::vector<float> absmaxes(kBlocks);
    std::vector<std::uint16_t> strided(2 * patterns.size(), 0x3F80);
    for (std::size_t i = 0; i < patterns.size(); ++i) strided[2 * i] = patterns[i];
    TensorView strided_input = contiguous_view(strided.data(), DType::bf16, Device::cpu(), {2 * n});
    strided_input.index = make_index({n}, {2}, 0);
    quantize_blockwise(strided_input, info.format, kBlocksize,
                       {contiguous_view(expected.data(), table.bits == 8 ? DType::u8 : DType::packed4, Device::cpu(), {n}),
                        contiguous_view(absmaxes.data(), DType::f32, Device::cpu(), {kBlocks}),
                        contiguous_view(flags.data(), DType::u8, Device::cpu(), {kBlocks})});
    QuantizeParams p;
    p.input = patterns.data();
    p.input_dtype = DType::bf16;
    p.numel = n;
    p.blocksize = kBlocksize;
    p.codes = codes.data();
    p.absmax = absmaxes.data();
    p.nonfinite = flags.data();
    for (std::int64_t block = 0; block < kBlocks; ++block) {
      ASSERT_TRUE(cpu::quantize_block_by_keys(table, p, block, moved.get())) << info.name << " block " << block;
    }
    for (std::size_t i = 0; i < codes.size(); ++i) {
      ASSERT_EQ(codes[i], expected[i]) << info.name << " moved keys, code byte " << i << " (block "
                                       << (table.bits == 8 ? i : 2 * i) / kBlocksize << ")";
    }
  }
}

// Blocks of absmax 2^17 and 2^40 holding the bf16 inputs equal to the tie map's edges (+-2^-133,
// +-2^-110) and their neighbours: the launcher must round those ties as fl32 does.
TEST(InputKeys, LauncherDecidesEdgeTiesAsTheStridedPath) {
  std::vector<std::uint16_t> patterns;
  for (const std::uint16_t absmax : {0x4800, 0x5380}) {  // 2^17, 2^40
    const std::uint16_t tie = absmax == 0x4800 ? 0x0001 : 0x0900;  // 2^-133, 2^-110
    std::vector<std::uint16_t> block = {absmax, 0x0000, 0x8000};
    for (const int step : {-1, 0, 1}) {
      block.push_back(static_cast<std::uint16_t>(tie + step));
      block.push_back(static_cast<std::uint16_t>((tie + step) | 0x8000));
    }
    block.resize(64, tie);
    patterns.insert(patterns.end(), block.begin(), block.end());
  }
  expect_contiguous_equals_strided(input_keys_tie_format(), DType::bf16, 64, patterns);
  const CodeTable table = tie_table();
  EXPECT_NE(table.sorted_codes[nearest_sorted_index_by_search(table, normalize(bf16_to_float(0x0001), 0x1p17f))],
            table.sorted_codes[nearest_sorted_index_by_search(table, normalize(bf16_to_float(0x0002), 0x1p17f))])
      << "the tie input and its neighbour above must get different codes, or the block tests nothing";
}

}  // namespace
}  // namespace bitparity
