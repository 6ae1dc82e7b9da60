// The CUDA gradient scan's test of a 16-byte load (packed_gradient_nonfinite), run here on the host:
// every 16-bit pattern, in either half of a word and in any of its four words, and fp32 patterns
// around the finite edge, are flagged exactly where gradient_nonfinite flags the element. Also the
// CPU launchers' contiguous scan (any_gradient_nonfinite_contiguous), which tests 16-bit patterns
// without widening them.
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>

#include "bitparity/kernels/optim_body.hpp"

namespace bitparity {
namespace {

bool element_nonfinite(std::uint16_t pattern, DType dtype) {
  return nonfinite_gradient_value(dtype == DType::f16 ? load_as<DType::f16>(&pattern, 0) : load_as<DType::bf16>(&pattern, 0));
}

TEST(PackedGradient, EverySixteenBitPatternInEveryPositionIsFlaggedAsItsElement) {
  for (DType dtype : {DType::f16, DType::bf16}) {
    int flagged = 0;
    for (std::uint32_t pattern = 0; pattern <= 0xFFFFu; ++pattern) {
      const bool expected = element_nonfinite(static_cast<std::uint16_t>(pattern), dtype);
      flagged += expected ? 1 : 0;
      for (int position = 0; position < 8; ++position) {
        std::uint32_t words[4] = {0, 0, 0, 0};  // zeros are finite
        words[position / 2] = position % 2 == 0 ? pattern : pattern << 16;
        ASSERT_EQ(packed_gradient_nonfinite(words, 4, dtype), expected)
            << dtype_name(dtype) << " pattern 0x" << std::hex << pattern << " at element " << std::dec << position;
      }
    }
    // f16: exponent 31 (2 x 1024 patterns); bf16: exponent 255 (2 x 128).
    EXPECT_EQ(flagged, dtype == DType::f16 ? 2048 : 256) << dtype_name(dtype);
  }
}

// Every pattern at the start, middle and end of a run of 45 finite gradients (vector lanes and the
// scalar tail), through the contiguous scan of its dtype.
template <DType D>
void expect_contiguous_scan_flags_every_pattern() {
  for (std::uint32_t pattern = 0; pattern <= 0xFFFFu; ++pattern) {
    const bool expected = element_nonfinite(static_cast<std::uint16_t>(pattern), D);
    for (const int position : {0, 17, 44}) {
      std::uint16_t grad[46];
      for (auto& g : grad) g = D == DType::f16 ? 0x3C00 : 0x3F80;  // 1.0
      grad[position + 1] = static_cast<std::uint16_t>(pattern);
      OptimizerParams p;
      p.grad = grad;
      p.grad_dtype = D;
      p.grad_index.offset = 1;  // the scan starts at the view's offset
      ASSERT_EQ(any_gradient_nonfinite_contiguous<D>(p, 0, 45), expected)
          << dtype_name(D) << " pattern 0x" << std::hex << pattern << " at element " << std::dec << position;
    }
  }
}

TEST(PackedGradient, ContiguousScanFlagsEverySixteenBitPatternAsItsElement) {
  expect_contiguous_scan_flags_every_pattern<DType::f16>();
  expect_contiguous_scan_flags_every_pattern<DType::bf16>();
}

TEST(PackedGradient, Fp32PatternsAroundTheFiniteEdgeAreFlaggedAsTheirElement) {
  for (std::uint32_t pattern : {0x00000000u, 0x80000000u, 0x00000001u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x7F800000u, 0xFF800000u,
                                0x7F800001u, 0x7FC00000u, 0xFFC00000u, 0x7FFFFFFFu, 0x3F800000u}) {
    const bool expected = nonfinite_gradient_value(float_from_bits(pattern));
    for (int position = 0; position < 4; ++position) {
      std::uint32_t words[4] = {0x3F800000u, 0x3F800000u, 0x3F800000u, 0x3F800000u};
      words[position] = pattern;
      ASSERT_EQ(packed_gradient_nonfinite(words, 4, DType::f32), expected)
          << "fp32 0x" << std::hex << pattern << " at element " << std::dec << position;
    }
  }
}

}  // namespace
}  // namespace bitparity
