// scan_contiguous, the vectorized scan of a contiguous block (quantize's absmax, the 8-bit step's
// new absmax), against scan_element on each value: the same absmax bits and the same non-finite
// flag, for every input dtype, at every length up to 300, on finite patterns of every exponent and
// sign, and on blocks where a NaN or an infinity (of either sign) sits at any position, alone or
// above finite values. Such a block's absmax is still its largest finite magnitude.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "bitparity/kernels/bits.hpp"
#include "bitparity/kernels/element_access.hpp"
#include "bitparity/kernels/quant_body.hpp"

namespace bitparity {
namespace {

constexpr std::int64_t kLongestBlock = 300;
constexpr std::int64_t kOffset = 3;  // the block starts inside its buffer, as a tensor's offset does

template <DType D>
constexpr int kWidth = D == DType::f32 ? 4 : 2;

template <DType D>
void put_bits(std::vector<std::uint8_t>& storage, std::int64_t at, std::uint32_t bits) {
  if constexpr (D == DType::f32) {
    std::memcpy(&storage[static_cast<std::size_t>(at) * 4], &bits, 4);
  } else {
    const auto narrow = static_cast<std::uint16_t>(bits);
    std::memcpy(&storage[static_cast<std::size_t>(at) * 2], &narrow, 2);
  }
}

// A finite pattern of D from random bits (a NaN or infinity pattern becomes a signed zero).
template <DType D>
std::uint32_t finite_bits(std::mt19937_64& random) {
  if constexpr (D == DType::f32) {
    auto bits = static_cast<std::uint32_t>(random());
    return (bits & 0x7F800000u) == 0x7F800000u ? bits & 0x80000000u : bits;
  } else {
    auto bits = static_cast<std::uint16_t>(random());
    const std::uint16_t exponent = D == DType::f16 ? 0x7C00u : 0x7F80u;
    return (bits & exponent) == exponent ? bits & 0x8000u : bits;
  }
}

// A NaN (quiet or signalling, any payload) or an infinity of D, of either sign.
template <DType D>
std::uint32_t nonfinite_bits(std::mt19937_64& random) {
  const bool infinity = random() % 2 == 0;
  const auto sign_and_payload = static_cast<std::uint32_t>(random());
  if constexpr (D == DType::f32) {
    const std::uint32_t payload = infinity ? 0u : (sign_and_payload & 0x007FFFFFu) | 1u;
    return (sign_and_payload & 0x80000000u) | 0x7F800000u | payload;
  } else {
    const std::uint32_t exponent = D == DType::f16 ? 0x7C00u : 0x7F80u;
    const std::uint32_t mantissa = D == DType::f16 ? 0x03FFu : 0x007Fu;
    const std::uint32_t payload = infinity ? 0u : (sign_and_payload & mantissa) | 1u;
    return (sign_and_payload & 0x8000u) | exponent | payload;
  }
}

template <DType D>
void check_scans(std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<std::uint8_t> storage(static_cast<std::size_t>((kLongestBlock + kOffset) * kWidth<D>));
  for (std::int64_t count = 0; count <= kLongestBlock; ++count) {
    for (int nonfinite_values = 0; nonfinite_values <= 2; ++nonfinite_values) {
      for (std::int64_t i = 0; i < kOffset + count; ++i) put_bits<D>(storage, i, finite_bits<D>(random));
      if (count > 0) {
        for (int n = 0; n < nonfinite_values; ++n) {
          put_bits<D>(storage, kOffset + static_cast<std::int64_t>(random() % count), nonfinite_bits<D>(random));
        }
      }
      BlockScan expected;
      for (std::int64_t i = 0; i < count; ++i) scan_element(expected, load_as<D>(storage.data(), kOffset + i));
      const BlockScan actual = scan_contiguous<D>(storage.data(), kOffset, 0, count);
      ASSERT_EQ(float_bits(actual.absmax), float_bits(expected.absmax))
          << dtype_name(D) << " block of " << count << " with " << nonfinite_values << " non-finite values";
      ASSERT_EQ(actual.nonfinite, expected.nonfinite)
          << dtype_name(D) << " block of " << count << " with " << nonfinite_values << " non-finite values";
    }
  }
}

TEST(BlockScan, ContiguousScanIsTheElementScanOnFp32) { check_scans<DType::f32>(11); }
TEST(BlockScan, ContiguousScanIsTheElementScanOnF16) { check_scans<DType::f16>(12); }
TEST(BlockScan, ContiguousScanIsTheElementScanOnBf16) { check_scans<DType::bf16>(13); }

// A block whose only large magnitudes are not finite: its absmax is the largest finite one, never
// the infinity's or NaN's bits (the first loop's maximum is at or above infinity's there).
TEST(BlockScan, NonFiniteValuesAboveFiniteOnesLeaveTheFiniteAbsmax) {
  const std::vector<float> values = {0.5f, -3.0f, std::numeric_limits<float>::infinity(), 2.0f,
                                     -std::numeric_limits<float>::quiet_NaN()};
  const BlockScan scan = scan_contiguous<DType::f32>(values.data(), 0, 0, static_cast<std::int64_t>(values.size()));
  EXPECT_EQ(float_bits(scan.absmax), float_bits(3.0f));
  EXPECT_TRUE(scan.nonfinite);
  EXPECT_EQ(float_bits(stored_absmax(scan)), kCanonicalNanF32);
}

}  // namespace
}  // namespace bitparity
