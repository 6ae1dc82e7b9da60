// A dequantize block's table of outputs in AVX-512 lanes (code_outputs_cpu.hpp; 256 for an 8-bit map,
// 16 for a 4-bit one): its round-to-odd product is taken toward zero, the body's from the product to
// nearest. They must give the body's words: for every registered map at absmaxes across fp32's
// range (the edges where the error term stops being exact, subnormals, infinity, NaN), and through
// the launcher against the strided path, which computes element by element. The selection of each code's word from that
// table (code_select_cpu.hpp) must move the words as SelectByCode does, at every count: its byte
// planes take 64 codes at a time, word permutes the next 32, the body the rest; 4-bit codes' vector
// selections (nibble_select_cpu.hpp) likewise against SelectByNibbles.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "bitparity/kernels/quant_body.hpp"
#include "bitparity/kernels/quantize.hpp"
#include "code_outputs_cpu.hpp"
#include "code_select_cpu.hpp"
#include "nibble_select_cpu.hpp"

namespace bitparity {
namespace {

std::vector<float> edge_absmaxes() {
  std::vector<float> values = {1.0f, 3.0f, 0x1.fffffep-1f, 0x1p-149f, 0x1p-130f, 0x1p-126f, 0x1.fffffep-127f,
                               0x1p-101f, 0x1.000002p-101f, 0x1.fffffep-102f, 0x1p-100f, 0x1p-80f, 0x1p-24f,
                               0x1p-25f, 0x1.8p-25f, 65504.0f, 65520.0f, 0x1p20f, std::numeric_limits<float>::max(),
                               std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()};
  std::mt19937 rng(20261127);
  std::uniform_int_distribution<std::uint32_t> finite_bits(1u, 0x7F7FFFFFu);
  for (int i = 0; i < 4000; ++i) values.push_back(float_from_bits(finite_bits(rng)));
  return values;
}

template <DType D>
void expect_vector_table_equals_body(const CodeTable& table, std::string_view name, float absmax) {
  if (!products_round_in_fp32<D>(table, absmax)) return;  // the launcher keeps the body's table there
  const int codes = table.bits == 8 ? 256 : 16;
  std::uint16_t expected[257], got[257];
  expected[codes] = got[codes] = 0xBEEF;  // the word past the table stays
  OutputsOfCodes{}.compute<D>(table, absmax, expected, HalfRunsByElement{}, codes);
  cpu::outputs_of_codes_avx512(table.code_values, absmax, D == DType::f16, got, codes);
  for (int code = 0; code <= codes; ++code) {
    ASSERT_EQ(got[code], expected[code]) << name << " " << dtype_name(D) << " absmax " << std::hexfloat << absmax
                                         << " code " << std::dec << code << " value " << std::hexfloat
                                         << table.code_values[code];
  }
}

TEST(CodeOutputs, VectorTableEqualsTheBodysForEveryMapAndAbsmax) {
  if (!cpu::cpu_has_avx512bw()) GTEST_SKIP() << "no AVX-512 BW on this CPU: the launcher keeps the body's table";
  int bf16_tables = 0;
  for (const auto& info : quant_formats()) {
    const CodeTable& table = code_table(info.format);
    for (const float absmax : edge_absmaxes()) {
      expect_vector_table_equals_body<DType::f16>(table, info.name, absmax);
      expect_vector_table_equals_body<DType::bf16>(table, info.name, absmax);
      bf16_tables += products_round_in_fp32<DType::bf16>(table, absmax) ? 1 : 0;
    }
  }
  EXPECT_GT(bf16_tables, 1000) << "the bf16 comparisons must not all be skipped";
}

// Products near f16's and bf16's rounding midpoints: code values whose products with the absmax
// are inexact in fp32 just above or below a midpoint, where only a correct sticky bit rounds right.
template <DType D>
void expect_body_near_midpoints() {
  CodeTable table = code_table(parse_quant_format("linear8"));
  // fp32 bits of an output's kept significand and of its rounding bit in D.
  constexpr std::uint32_t kKept = D == DType::bf16 ? 0x7F0000u : 0x7FE000u;
  constexpr std::uint32_t kRoundingBit = D == DType::bf16 ? 0x8000u : 0x1000u;
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::uint32_t> fraction(0u, 0x7FFFFFu);
  int inexact = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const float absmax = float_from_bits(0x3F800000u | fraction(rng));  // [1, 2), a full significand
    for (int code = 0; code < 256; ++code) {
      // A midpoint of D in [0.5, 1) divided by the absmax, rounded one way or the other to fp32.
      const float midpoint = float_from_bits(0x3F000000u | (fraction(rng) & kKept) | kRoundingBit);
      const float value = std::nextafter(midpoint / absmax, code % 2 == 0 ? 0.0f : 2.0f);
      table.code_values[code] = code % 4 < 2 ? value : -value;
      const double exact = static_cast<double>(value) * static_cast<double>(absmax);
      inexact += static_cast<double>(static_cast<float>(exact)) != exact ? 1 : 0;
    }
    expect_vector_table_equals_body<D>(table, "linear8 values near midpoints", absmax);
  }
  EXPECT_GT(inexact, 40000) << "most products must be inexact in fp32, or the sticky bit is untested";
}

TEST(CodeOutputs, VectorTableRoundsNearMidpointsAsTheBody) {
  if (!cpu::cpu_has_avx512bw()) GTEST_SKIP() << "no AVX-512 BW on this CPU";
  expect_body_near_midpoints<DType::f16>();
  expect_body_near_midpoints<DType::bf16>();
}

TEST(CodeOutputs, VectorSelectionMovesTheTablesWordsAtEveryCount) {
  if (!cpu::cpu_has_avx512vbmi2()) {
    RecordProperty("untested", "byte planes: no AVX-512 VBMI2 on this CPU, word permutes and SelectByCode only");
  }
  std::mt19937 rng(20261129);
  std::uint16_t of_code[256];
  for (auto& word : of_code) word = static_cast<std::uint16_t>(rng());
  std::vector<std::uint8_t> codes(600);
  for (auto& code : codes) code = static_cast<std::uint8_t>(rng());
  for (int code = 0; code < 256; ++code) codes[static_cast<std::size_t>(code)] = static_cast<std::uint8_t>(255 - code);
  for (std::int64_t count = 0; count <= 600; ++count) {
    std::vector<std::uint16_t> expected(static_cast<std::size_t>(count) + 1, 0xBEEF), got = expected;
    SelectByCode{}(of_code, codes.data(), expected.data(), count);
    cpu::SelectByCodeVector{}(of_code, codes.data(), got.data(), count);
    for (std::int64_t i = 0; i <= count; ++i) {  // the word past the end stays
      ASSERT_EQ(got[static_cast<std::size_t>(i)], expected[static_cast<std::size_t>(i)])
          << "count " << count << " element " << i;
    }
  }
}

// Each 4-bit selection the CPU has, on every count of code bytes from 0 to 300, against
// SelectByNibbles; the output word past the end stays.
template <class Word, class Vector>
void expect_nibble_selection_moves_words(const Word (&of_code)[16], const std::vector<std::uint8_t>& codes,
                                         const Vector& vector_selection, const char* name) {
  for (std::int64_t bytes = 0; bytes <= 300; ++bytes) {
    std::vector<Word> expected(static_cast<std::size_t>(2 * bytes + 1), Word{7}), got = expected;
    SelectByNibbles{}(of_code, codes.data(), expected.data(), bytes);
    const std::int64_t done = vector_selection(of_code, codes.data(), got.data(), bytes);
    SelectByNibbles{}(of_code, codes.data() + done, got.data() + 2 * done, bytes - done);
    for (std::int64_t i = 0; i <= 2 * bytes; ++i) {
      ASSERT_EQ(std::memcmp(&got[static_cast<std::size_t>(i)], &expected[static_cast<std::size_t>(i)], sizeof(Word)), 0)
          << name << " bytes " << bytes << " element " << i;
    }
  }
}

TEST(CodeOutputs, VectorNibbleSelectionsMoveTheTablesWordsAtEveryCount) {
  if (!cpu::cpu_has_avx512bw() && !cpu::cpu_has_avx2()) GTEST_SKIP() << "no AVX2 on this CPU: SelectByNibbles alone";
  std::mt19937 rng(20261130);
  std::uint16_t words[16];
  float floats[16];
  for (int code = 0; code < 16; ++code) {
    words[code] = static_cast<std::uint16_t>(rng());
    floats[code] = float_from_bits(static_cast<std::uint32_t>(rng()));
  }
  std::vector<std::uint8_t> codes(300);
  for (auto& code : codes) code = static_cast<std::uint8_t>(rng());
  for (int byte = 0; byte < 256; ++byte) codes[static_cast<std::size_t>(byte)] = static_cast<std::uint8_t>(byte);
  using WordSelection = std::int64_t (*)(const std::uint16_t*, const std::uint8_t*, std::uint16_t*, std::int64_t);
  using FloatSelection = std::int64_t (*)(const float*, const std::uint8_t*, float*, std::int64_t);
  if (cpu::cpu_has_avx512bw()) {
    expect_nibble_selection_moves_words(words, codes, static_cast<WordSelection>(cpu::select_by_nibbles_avx512),
                                        "avx512 words");
    expect_nibble_selection_moves_words(floats, codes, static_cast<FloatSelection>(cpu::select_by_nibbles_avx512),
                                        "avx512 fp32");
  }
  if (cpu::cpu_has_avx2()) {
    expect_nibble_selection_moves_words(words, codes, static_cast<WordSelection>(cpu::select_by_nibbles_avx2),
                                        "avx2 words");
    expect_nibble_selection_moves_words(floats, codes, static_cast<FloatSelection>(cpu::select_by_nibbles_avx2),
                                        "avx2 fp32");
  }
}

// The launcher (the vector table where the CPU has it) against a stride-2 output (the element
// loop), over blocks whose absmaxes cross fp32's range, bf16's fp32-lane limit and non-finite values.
TEST(CodeOutputs, LauncherGivesTheStridedPathsOutputs) {
  const std::int64_t blocksize = 256;
  const std::vector<float> absmaxes = edge_absmaxes();
  const auto blocks = static_cast<std::int64_t>(absmaxes.size());
  const std::int64_t n = blocks * blocksize;
  std::vector<std::uint8_t> codes(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) codes[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>((i * 97 + i / 256) % 256);
  for (const auto& info : quant_formats()) {
    for (const DType dtype : {DType::f16, DType::bf16}) {
      const auto run = [&](bool strided) {
        std::vector<std::uint16_t> out(static_cast<std::size_t>(strided ? 2 * n : n), 0x1234);
        DequantizeParams p;
        p.codes = codes.data();
        p.absmax = absmaxes.data();
        p.numel = n;
        p.blocksize = blocksize;
        p.bits = info.bits;
        p.output = out.data();
        p.output_dtype = dtype;
        p.output_index = strided ? make_index({n}, {2}, 0) : make_index({n}, {1}, 0);
        cpu::dequantize(code_table(info.format), p, LaunchConfig{});
        if (!strided) return out;
        std::vector<std::uint16_t> every_other(static_cast<std::size_t>(n));
        for (std::int64_t i = 0; i < n; ++i) every_other[static_cast<std::size_t>(i)] = out[static_cast<std::size_t>(2 * i)];
        return every_other;
      };
      ASSERT_TRUE(make_index({n}, {1}, 0).contiguous);
      const std::vector<std::uint16_t> got = run(false), expected = run(true);
      for (std::int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(got[static_cast<std::size_t>(i)], expected[static_cast<std::size_t>(i)])
            << info.name << " " << dtype_name(dtype) << " element " << i << " absmax " << std::hexfloat
            << absmaxes[static_cast<std::size_t>(i / blocksize)];
      }
    }
  }
}

}  // namespace
}  // namespace bitparity
