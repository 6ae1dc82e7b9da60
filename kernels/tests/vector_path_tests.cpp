// The CPU launcher's contiguous paths are the kernel body vectorized by the compiler (gathers,
// selects, bit-pattern reductions). These tests put them on the exact decision edges, where a
// vectorized select or gather that differs from the scalar body would show.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "bitparity/kernels/code_map.hpp"
#include "bitparity/kernels/launch.hpp"
#include "bitparity/kernels/optimizer.hpp"
#include "bitparity/kernels/quantize.hpp"
#include "absmax_near_ties.hpp"
#include "cpu_features.hpp"

namespace bitparity {
namespace {

constexpr std::int64_t kBlock = 64;

// Every threshold and its neighbours within 2 ulps, both signs' extremes and the specials the body
// handles apart (+-0, subnormals), in blocks that each start with 1.0 so that absmax is 1 and the
// division is exact: the code of x must be the scalar search's code of x itself.
std::vector<float> decision_edges(const CodeTable& table) {
  std::vector<float> edges;
  for (int i = 0; i + 1 < table.sorted_count; ++i) {
    const std::uint32_t m = float_bits(table.thresholds[i]);
    for (std::uint32_t d = 0; d <= 2; ++d) {
      for (const std::uint32_t bits : {m - d, m + d}) {
        const float v = float_from_bits(bits);
        if (std::fabs(v) <= 1.0f) edges.push_back(v);
      }
    }
  }
  for (const float v : {0.0f, -0.0f, 1e-45f, -1e-45f, 1.0f, -1.0f, 0.5f, -0.5f, -0.25f}) edges.push_back(v);
  std::vector<float> input;
  for (std::size_t i = 0; i < edges.size(); ++i) {
    if (input.size() % kBlock == 0) input.push_back(1.0f);
    input.push_back(edges[i]);
  }
  // An odd count: a 4-bit tensor's last byte holds one element. A new block starts with 1.0 too.
  if (input.size() % 2 == 0) input.push_back(input.size() % kBlock == 0 ? 1.0f : 0.75f);
  return input;
}

int code_of(const std::vector<std::uint8_t>& codes, int bits, std::size_t i) {
  if (bits == 8) return codes[i];
  return i % 2 == 0 ? codes[i / 2] >> 4 : codes[i / 2] & 0x0F;
}

void expect_search_codes_at_decision_edges(QuantFormat format) {
  const CodeTable& table = code_table(format);
  const std::string name(quant_format_info(format).name);
  std::vector<float> input = decision_edges(table);
  const auto n = static_cast<std::int64_t>(input.size());
  const std::int64_t blocks = block_count(n, kBlock);
  std::vector<std::uint8_t> codes(static_cast<std::size_t>(table.bits == 8 ? n : (n + 1) / 2)), flags(blocks);
  std::vector<float> absmax(static_cast<std::size_t>(blocks));
  const QuantizeOutputs outputs{
      contiguous_view(codes.data(), table.bits == 8 ? DType::u8 : DType::packed4, Device::cpu(), {n}),
      contiguous_view(absmax.data(), DType::f32, Device::cpu(), {blocks}),
      contiguous_view(flags.data(), DType::u8, Device::cpu(), {blocks})};
  quantize_blockwise(contiguous_view(input.data(), DType::f32, Device::cpu(), {n}), format, kBlock, outputs);
  for (std::int64_t b = 0; b < blocks; ++b) ASSERT_EQ(absmax[static_cast<std::size_t>(b)], 1.0f) << name;
  for (std::size_t i = 0; i < input.size(); ++i) {
    const int expected = table.sorted_codes[nearest_sorted_index_by_search(table, input[i])];
    ASSERT_EQ(code_of(codes, table.bits, i), expected) << name << " element " << i << " x " << std::hexfloat << input[i];
  }
  if (table.bits == 4) {
    EXPECT_EQ(codes.back() & 0x0F, 0) << name << ": the odd element's byte";
  }
}

// Through the finer index, which every built-in map has.
TEST(VectorPaths, ContiguousQuantizeGivesTheScalarSearchsCodeAtEveryDecisionEdge) {
  for (const auto& info : quant_formats()) expect_search_codes_at_decision_edges(info.format);
}

// Through the windowed search, for a map too dense for the finer index.
TEST(VectorPaths, ContiguousQuantizeOfAMapWithoutTheFinerIndexGivesTheSearchsCode) {
  std::vector<float> values(256);
  for (int i = 0; i < 256; ++i) values[static_cast<std::size_t>(i)] = static_cast<float>(i - 128) / 128.0f;
  values[253] = 1.0f;
  values[254] = 1.0f - 0x1p-19f;
  values[255] = 1.0f - 0x1p-20f;
  const QuantFormat format = register_code_map({"test-vector-dense-map", 8, values, "a test map"});
  ASSERT_EQ(code_table(format).nearest_ready, 0);
  expect_search_codes_at_decision_edges(format);
}

// 4-bit maps with fewer distinct values: the vector searches start at a smaller first step.
TEST(VectorPaths, ContiguousQuantizeOfSmaller4BitMapsGivesTheSearchsCode) {
  for (int distinct = 2; distinct <= 16; ++distinct) {
    std::vector<float> values(16, 1.0f);  // repeats of the largest value fill the 16 codes
    for (int k = 0; k < distinct; ++k) values[static_cast<std::size_t>(k)] = static_cast<float>(k) / static_cast<float>(distinct - 1);
    const QuantFormat format =
        register_code_map({"test-vector-4bit-" + std::to_string(distinct), 4, values, "a test map"});
    ASSERT_EQ(code_table(format).sorted_count, distinct);
    expect_search_codes_at_decision_edges(format);
  }
}

// The scan on bit patterns: the largest finite magnitude, and NaN/inf flagged wherever they sit.
TEST(VectorPaths, ContiguousScanFindsTheAbsmaxAndEveryNonFiniteBlock) {
  const CodeTable& table = code_table(QuantFormat::dynamic8_signed);
  std::vector<float> input(static_cast<std::size_t>(kBlock * 6), 0.25f);
  input[3] = -7.5f;                                            // block 0: absmax 7.5 from a negative
  input[kBlock + 63] = std::numeric_limits<float>::infinity();  // block 1: inf in the last lane
  input[2 * kBlock + 17] = -std::nanf("");                     // block 2: a negative NaN
  input[3 * kBlock + 40] = std::numeric_limits<float>::max();  // block 3: the largest finite
  input[4 * kBlock] = 1e-45f;                                  // block 4: 0.25 stays the absmax
  for (std::size_t i = 5 * kBlock; i < input.size(); ++i) input[i] = -0.0f;  // block 5: all -0
  const auto n = static_cast<std::int64_t>(input.size());
  std::vector<std::uint8_t> codes(input.size()), flags(6);
  std::vector<float> absmax(6);
  const QuantizeOutputs outputs{contiguous_view(codes.data(), DType::u8, Device::cpu(), {n}),
                                contiguous_view(absmax.data(), DType::f32, Device::cpu(), {6}),
                                contiguous_view(flags.data(), DType::u8, Device::cpu(), {6})};
  quantize_blockwise(contiguous_view(input.data(), DType::f32, Device::cpu(), {n}), QuantFormat::dynamic8_signed,
                     kBlock, outputs);
  EXPECT_EQ(absmax[0], 7.5f);
  EXPECT_TRUE(flags[1] && std::isnan(absmax[1]));
  EXPECT_TRUE(flags[2] && std::isnan(absmax[2]));
  EXPECT_EQ(absmax[3], std::numeric_limits<float>::max());
  EXPECT_EQ(absmax[4], 0.25f);
  EXPECT_EQ(float_bits(absmax[5]), 0u);
  EXPECT_EQ(flags[0] + flags[3] + flags[4] + flags[5], 0);
  for (std::size_t i = kBlock; i < 3 * kBlock; ++i) ASSERT_EQ(codes[i], table.zero_code) << "non-finite block, element " << i;
}

// The outputs of one dequantize through the contiguous path, then of the same storage through the
// element path (the view marked non-contiguous).
std::vector<std::vector<std::uint8_t>> dequantized_by_both_paths(const TensorView& codes, std::vector<float>& absmax,
                                                                QuantFormat format, std::int64_t block, DType dtype,
                                                                std::int64_t n) {
  const auto blocks = static_cast<std::int64_t>(absmax.size());
  std::vector<std::vector<std::uint8_t>> outputs;
  for (const bool contiguous : {true, false}) {
    std::vector<std::uint8_t> out(static_cast<std::size_t>(dtype_storage_bytes(dtype, n)), 0xA5);
    TensorView view = contiguous_view(out.data(), dtype, Device::cpu(), {n});
    view.index.contiguous = contiguous;  // false: the same storage through the element path
    dequantize_blockwise(codes, contiguous_view(absmax.data(), DType::f32, Device::cpu(), {blocks}), format, block, view);
    outputs.push_back(out);
  }
  return outputs;
}

// 4-bit dequantize into a contiguous output selects each block's outputs from a 16-entry table
// (vector permutes with AVX-512): every byte pattern, tails of every length around the 16- and
// 32-byte vectors, an odd last element and absmax values that make zeros, subnormals, infinities
// and NaNs must give the element-by-element path's bits.
TEST(VectorPaths, Contiguous4BitDequantizeGivesTheElementPathsBits) {
  const std::vector<float> absmax_cycle = {1.0f, 0.3f, std::numeric_limits<float>::max(), 0x1p-149f, 0.0f,
                                           std::numeric_limits<float>::infinity(), std::nanf(""), 0x1.8p-14f};
  for (const QuantFormat format : {QuantFormat::nf4, QuantFormat::fp4, QuantFormat::fp4_positive_zero}) {
    for (const DType dtype : {DType::f32, DType::f16, DType::bf16}) {
      for (const std::int64_t n : {1, 2, 31, 63, 64, 65, 127, 129, 191, 255, 384, 4097}) {
        const std::int64_t blocks = (n + kBlock - 1) / kBlock;
        std::vector<std::uint8_t> codes(static_cast<std::size_t>((n + 1) / 2));
        for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<std::uint8_t>(i * 37 + 11);
        std::vector<float> absmax(static_cast<std::size_t>(blocks));
        for (std::size_t b = 0; b < absmax.size(); ++b) absmax[b] = absmax_cycle[b % absmax_cycle.size()];
        const auto outputs = dequantized_by_both_paths(contiguous_view(codes.data(), DType::packed4, Device::cpu(), {n}),
                                                       absmax, format, kBlock, dtype, n);
        ASSERT_EQ(outputs[0], outputs[1]) << quant_format_info(format).name << " " << dtype_name(dtype) << " n=" << n;
      }
    }
  }
}

// 4-bit blocks' 16 outputs are rounded in fp32 lanes too, as the 8-bit table's: every code in both
// nibbles, into every output dtype, at absmaxes that put products next to f16 and bf16 ties and
// underflow, must give the element path's bits.
TEST(VectorPaths, Contiguous4BitDequantizeNearTiesGivesTheElementPathsBits) {
  for (const QuantFormat format : {QuantFormat::nf4, QuantFormat::fp4, QuantFormat::fp4_positive_zero}) {
    const CodeTable& table = code_table(format);
    std::vector<float> absmax = absmax_near_ties(table);
    const std::size_t bytes_per_block = kBlock / 2;
    const std::int64_t n = static_cast<std::int64_t>(absmax.size()) * kBlock;
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(n / 2));
    // 32 bytes a block, one absmax each: byte j's high nibble j % 16 and low nibble (7j + block) % 16,
    // so every code meets every absmax in both nibbles, with different neighbours from block to block.
    for (std::size_t i = 0; i < codes.size(); ++i) {
      const std::size_t j = i % bytes_per_block, block = i / bytes_per_block;
      codes[i] = static_cast<std::uint8_t>(((j % 16) << 4) | ((7 * j + block) % 16));
    }
    for (const DType dtype : {DType::f32, DType::f16, DType::bf16}) {
      const auto outputs = dequantized_by_both_paths(contiguous_view(codes.data(), DType::packed4, Device::cpu(), {n}),
                                                     absmax, format, kBlock, dtype, n);
      const std::size_t word = static_cast<std::size_t>(dtype_storage_bytes(dtype, 1));
      for (std::size_t at = 0; at < outputs[0].size(); at += word) {
        ASSERT_TRUE(std::equal(outputs[0].begin() + at, outputs[0].begin() + at + word, outputs[1].begin() + at))
            << quant_format_info(format).name << " " << dtype_name(dtype) << " element " << at / word << ", absmax "
            << std::hexfloat << absmax[at / word / kBlock];
      }
    }
  }
}

// 8-bit dequantize into a contiguous output rounds the products in fp32 lanes (an fma error term and
// round-to-odd); the element path rounds the exact double product. Blocks of 256 or more take each
// code's output once and select from it, shorter blocks compute each element's. Every code of every
// 8-bit map, into every output dtype, at products next to ties and underflow, on both, must give
// the same bits.
TEST(VectorPaths, Contiguous8BitDequantizeGivesTheElementPathsBits) {
  constexpr std::int64_t kCodes = 256;
  for (const QuantFormat format : {QuantFormat::dynamic8_signed, QuantFormat::dynamic8_unsigned, QuantFormat::linear8,
                                   QuantFormat::linear8_fused}) {
    const CodeTable& table = code_table(format);
    const std::vector<float> absmax_values = absmax_near_ties(table);
    const std::int64_t n = static_cast<std::int64_t>(absmax_values.size()) * kCodes;
    // Each run of 256 elements holds every code once, out of order (37 is odd: a permutation), and
    // has one absmax value, whatever the block size.
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) codes[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>((i * 37 + 11) % kCodes);
    for (const std::int64_t blocksize : {kCodes, std::int64_t{64}}) {
      std::vector<float> absmax;
      for (const float value : absmax_values) absmax.insert(absmax.end(), static_cast<std::size_t>(kCodes / blocksize), value);
      for (const DType dtype : {DType::f32, DType::f16, DType::bf16}) {
        const auto outputs = dequantized_by_both_paths(contiguous_view(codes.data(), DType::u8, Device::cpu(), {n}), absmax,
                                                       format, blocksize, dtype, n);
        const std::size_t word = static_cast<std::size_t>(dtype_storage_bytes(dtype, 1));
        for (std::size_t at = 0; at < outputs[0].size(); at += word) {
          ASSERT_TRUE(std::equal(outputs[0].begin() + at, outputs[0].begin() + at + word, outputs[1].begin() + at))
              << quant_format_info(format).name << " " << dtype_name(dtype) << " block size " << blocksize << " element "
              << at / word << ": code " << int{codes[at / word]} << ", absmax " << std::hexfloat
              << absmax_values[at / word / kCodes];
        }
      }
    }
  }
}

// Blocks of at least 256 codes select each output from the block's 256-entry table (with AVX-512,
// 32 at a time by permutes of its four quarters); fp32 outputs take each code's value by byte
// permutes, 64 at a time. Every code in every position of the vectors, in blocks whose lengths leave
// tails of several lengths, with absmaxes that make zeros, subnormals, infinities and NaNs, must
// give the element path's bits.
TEST(VectorPaths, Contiguous8BitSelectionGivesTheElementPathsBitsInEveryPositionAndTail) {
  constexpr std::int64_t kBlocksize = 512;
  const std::vector<float> absmax_cycle = {0.3f, 1.0f, 7.5f, 0.0f, std::numeric_limits<float>::infinity(), std::nanf(""),
                                           0x1p-149f, std::numeric_limits<float>::max(), -2.0f};
  for (const std::int64_t n : {std::int64_t{256}, std::int64_t{257}, std::int64_t{287}, std::int64_t{511},
                               std::int64_t{512 + 300}, std::int64_t{1024 + 319}, std::int64_t{9 * 512 + 63}}) {
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(n));
    // Successive codes differ in bits 6 and 7 too (149 is odd: every code in every vector position).
    for (std::int64_t i = 0; i < n; ++i) codes[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>((i * 149 + 5) % 256);
    std::vector<float> absmax(static_cast<std::size_t>(block_count(n, kBlocksize)));
    for (std::size_t b = 0; b < absmax.size(); ++b) absmax[b] = absmax_cycle[b % absmax_cycle.size()];
    for (const DType dtype : {DType::f32, DType::f16, DType::bf16}) {
      const auto outputs = dequantized_by_both_paths(contiguous_view(codes.data(), DType::u8, Device::cpu(), {n}), absmax,
                                                     QuantFormat::dynamic8_signed, kBlocksize, dtype, n);
      ASSERT_EQ(outputs[0], outputs[1]) << dtype_name(dtype) << " n=" << n;
    }
  }
}

// Benchmarks and reports print which vector paths the CPU launchers take here: the description must
// name exactly the ones the launchers check.
TEST(VectorPaths, TheCpuDescriptionNamesThePathsTheLaunchersTake) {
  const std::string description = cpu_device_description();
  EXPECT_EQ(description.find("AVX-512 BW") != std::string::npos, cpu::cpu_has_avx512bw()) << description;
  EXPECT_EQ(description.find("AVX2") != std::string::npos, cpu::cpu_has_avx2()) << description;
  EXPECT_EQ(description.find("F16C") != std::string::npos, cpu::cpu_has_f16c()) << description;
  EXPECT_NE(description.find("thread"), std::string::npos) << description;
}

// Regression: the contiguous fp32 step stored a NaN with the bits the CPU computed (0xFFC00000 for
// inf/inf, an input NaN's payload) where every other path stores the canonical NaN.
TEST(VectorPaths, ContiguousStepStoresTheCanonicalNanInEveryTensor) {
  constexpr std::int64_t n = 40;
  for (const bool contiguous : {true, false}) {
    std::vector<float> param(n, 1.0f), grad(n, 0.5f), m(n, 0.1f), v(n, 0.2f);
    param[3] = float_from_bits(0x7FC00123u);  // an input NaN with a payload
    param[4] = float_from_bits(0xFFC00000u);  // x86's default NaN
    m[5] = std::numeric_limits<float>::infinity();
    v[5] = std::numeric_limits<float>::infinity();  // m / denom = inf / inf
    TensorView param_view = contiguous_view(param.data(), DType::f32, Device::cpu(), {n});
    param_view.index.contiguous = contiguous;  // false: the same storage through the strided path
    optimizer_step(OptimizerKind::adam, typical_hyperparameters(OptimizerKind::adam), param_view,
                   contiguous_view(grad.data(), DType::f32, Device::cpu(), {n}),
                   {contiguous_view(m.data(), DType::f32, Device::cpu(), {n}),
                    contiguous_view(v.data(), DType::f32, Device::cpu(), {n})});
    for (const std::int64_t i : {3, 4, 5}) {
      EXPECT_EQ(float_bits(param[i]), kCanonicalNanF32) << "parameter " << i << (contiguous ? " contiguous" : " strided");
    }
    EXPECT_EQ(float_bits(m[5]), 0x7F800000u);
    EXPECT_EQ(float_bits(param[6]), float_bits(param[7])) << "the finite neighbours step alike";
  }
}

}  // namespace
}  // namespace bitparity
