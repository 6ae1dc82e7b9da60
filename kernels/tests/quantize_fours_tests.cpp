// The CUDA launcher's contiguous quantize unit (widen_four, nearest_codes_of_four), run here on the
// host as quantize_block_by_fours runs it: each block's fours scanned from the little-endian words
// of their vector loads, then each four's codes stored at once (a word of 8-bit codes, 16 bits of
// 4-bit ones). Absmax and codes must be the CPU launcher's quantize_blockwise, for every map and
// input dtype, on values of every magnitude and sign, zeros of both signs and the map's midpoints.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <cstring>
#include <random>
#include <string_view>
#include <vector>

#include "bitparity/kernels/code_map.hpp"
#include "bitparity/kernels/quant_body.hpp"
#include "bitparity/kernels/quantize.hpp"

namespace bitparity {
namespace {

constexpr std::int64_t kBlock = 256;
constexpr std::int64_t kBlocks = 4;
constexpr std::int64_t kElements = kBlock * kBlocks;

// The storage of one finite value of D from random bits (non-finite patterns become zero).
template <DType D>
void put_random(std::vector<std::uint8_t>& storage, std::int64_t at, std::mt19937_64& random) {
  if constexpr (D == DType::f32) {
    auto bits = static_cast<std::uint32_t>(random());
    if ((bits & 0x7F800000u) == 0x7F800000u) bits &= 0x80000000u;
    std::memcpy(&storage[static_cast<std::size_t>(at) * 4], &bits, 4);
  } else {
    auto bits = static_cast<std::uint16_t>(random());
    const std::uint16_t exponent = D == DType::f16 ? 0x7C00u : 0x7F80u;
    if ((bits & exponent) == exponent) bits &= 0x8000u;
    std::memcpy(&storage[static_cast<std::size_t>(at) * 2], &bits, 2);
  }
}

// The storage of `value` rounded to D.
template <DType D>
void put_value(std::vector<std::uint8_t>& storage, std::int64_t at, float value) {
  store_float(storage.data(), D, at, value);
}

// Block 0: random bits, every magnitude. Block 1: random bits under one exponent band. Block 2:
// zeros of both signs among small values. Block 3: the map's midpoints, absmax 1.
template <DType D>
std::vector<std::uint8_t> input_of(const CodeTable& table, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<std::uint8_t> storage(static_cast<std::size_t>(kElements) * (D == DType::f32 ? 4 : 2));
  for (std::int64_t i = 0; i < kBlock; ++i) put_random<D>(storage, i, random);
  std::uniform_real_distribution<float> band(-3.0f, 3.0f);
  for (std::int64_t i = kBlock; i < 2 * kBlock; ++i) put_value<D>(storage, i, band(random));
  for (std::int64_t i = 2 * kBlock; i < 3 * kBlock; ++i) {
    const float small = band(random) * 1e-3f;
    put_value<D>(storage, i, i % 3 == 0 ? 0.0f : (i % 3 == 1 ? -0.0f : small));
  }
  put_value<D>(storage, 3 * kBlock, 1.0f);
  for (std::int64_t i = 3 * kBlock + 1; i < kElements; ++i) {
    const int lower = static_cast<int>(random() % static_cast<std::uint64_t>(table.sorted_count - 1));
    const float a = table.sorted_values[lower], b = table.sorted_values[lower + 1];
    put_value<D>(storage, i, (i % 2 == 0 ? 1.0f : -1.0f) * (0.5f * a + 0.5f * b));
  }
  return storage;
}

template <DType D, int Bits>
void expect_fours_match_cpu(QuantFormat format, std::string_view name) {
  const CodeTable& table = code_table(format);
  std::vector<std::uint8_t> storage = input_of<D>(table, 0x5EED0000u + static_cast<std::uint64_t>(format));
  // The CPU launcher.
  constexpr std::int64_t kCodeBytes = Bits == 8 ? kElements : kElements / 2;
  constexpr std::size_t kStoreBytes = Bits == 8 ? 4 : 2;  // the codes of four elements
  std::vector<std::uint8_t> codes(kCodeBytes), flags(kBlocks);
  std::vector<float> absmax(kBlocks);
  quantize_blockwise(contiguous_view(storage.data(), D, Device::cpu(), {kElements}), format, kBlock,
                     {contiguous_view(codes.data(), Bits == 8 ? DType::u8 : DType::packed4, Device::cpu(), {kElements}),
                      contiguous_view(absmax.data(), DType::f32, Device::cpu(), {kBlocks}),
                      contiguous_view(flags.data(), DType::u8, Device::cpu(), {kBlocks})});
  // The CUDA kernel's fours, lane by lane, deciding from a copy of the finer index's entries in use
  // as the kernel's shared memory holds it: entries past that count are poison, so a bucket the copy
  // lacks would give another code.
  std::vector<std::uint32_t> copied(kNearestBuckets, 0xFFFFFFFFu);
  std::copy_n(table.nearest_entry, nearest_entry_count(table), copied.begin());
  NearestIndex index = nearest_index(table);
  index.entry = copied.data();
  constexpr std::size_t kLoadBytes = sizeof(std::uint32_t) * kWordsOfFour<D>;
  const auto four_at = [&](std::int64_t first, float (&x)[4]) {
    std::uint32_t words[kWordsOfFour<D>];
    std::memcpy(words, &storage[static_cast<std::size_t>(first / 4) * kLoadBytes], kLoadBytes);
    widen_four<D>(words, x);
  };
  for (std::int64_t block = 0; block < kBlocks; ++block) {
    BlockScan scan;
    for (std::int64_t first = block * kBlock; first < (block + 1) * kBlock; first += 4) {
      float x[4];
      four_at(first, x);
      for (float value : x) scan_element(scan, value);
    }
    const float block_absmax = stored_absmax(scan);
    ASSERT_EQ(float_bits(block_absmax), float_bits(absmax[block])) << name << " " << dtype_name(D) << " block " << block;
    for (std::int64_t first = block * kBlock; first < (block + 1) * kBlock; first += 4) {
      float x[4];
      four_at(first, x);
      const std::uint32_t stored = nearest_codes_of_four<Bits>(table, index, x, block_absmax);
      std::uint8_t bytes[4];
      std::memcpy(bytes, &stored, 4);  // little-endian: the bytes a store of kStoreBytes writes first
      const std::size_t at = static_cast<std::size_t>(first / 4) * kStoreBytes;
      for (std::size_t j = 0; j < kStoreBytes; ++j) {
        ASSERT_EQ(bytes[j], codes[at + j]) << name << " " << dtype_name(D) << " byte " << j << " of the codes of elements "
                                           << first << ".." << first + 3 << " = " << std::hexfloat << x[0] << " " << x[1]
                                           << " " << x[2] << " " << x[3] << ", absmax " << block_absmax;
      }
      if (Bits == 4) {
        ASSERT_EQ(stored >> 16, 0u) << "4-bit codes of four elements fill 16 bits";
      }
    }
  }
}

template <int Bits>
void expect_every_dtype(QuantFormat format, std::string_view name) {
  expect_fours_match_cpu<DType::f32, Bits>(format, name);
  expect_fours_match_cpu<DType::f16, Bits>(format, name);
  expect_fours_match_cpu<DType::bf16, Bits>(format, name);
}

TEST(QuantizeFours, GiveTheCpuLaunchersAbsmaxAndCodes) {
  int maps[2] = {0, 0};
  for (const QuantFormatInfo& info : quant_formats()) {
    if (info.bits == 8) {
      expect_every_dtype<8>(info.format, info.name);
    } else {
      expect_every_dtype<4>(info.format, info.name);
    }
    ++maps[info.bits == 8 ? 0 : 1];
  }
  EXPECT_GE(maps[0], 6);
  EXPECT_GE(maps[1], 3);
}

// The CUDA quantize copies the first nearest_entry_count entries of the finer index: every value's
// bucket lies among them, the ends of the float range, NaN and every threshold included.
TEST(QuantizeFours, EveryBucketLiesWithinTheEntriesAKernelCopies) {
  int indexed = 0;
  for (const QuantFormatInfo& info : quant_formats()) {
    const CodeTable& table = code_table(info.format);
    if (table.nearest_ready == 0) continue;
    ++indexed;
    std::vector<float> values = {0.0f, std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::min(),
                                 1.0f, std::numeric_limits<float>::max(), std::numeric_limits<float>::infinity(),
                                 std::numeric_limits<float>::quiet_NaN()};
    for (int i = 0; i + 1 < table.sorted_count; ++i) values.push_back(table.thresholds[i]);
    for (const float magnitude : values) {
      for (const float v : {magnitude, -magnitude}) {
        const int bucket = nearest_bucket(table, v);
        EXPECT_GE(bucket, 0) << info.name << " " << std::hexfloat << v;
        EXPECT_LT(bucket, nearest_entry_count(table)) << info.name << " " << std::hexfloat << v;
      }
    }
  }
  // Maps other tests register may have none; every built-in map has one.
  EXPECT_GE(indexed, static_cast<int>(builtin_code_maps().size()));
}

}  // namespace
}  // namespace bitparity
